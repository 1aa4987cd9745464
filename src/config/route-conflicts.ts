import type { WebhookSource } from "../sources/webhook/webhook-source";

export interface RouteConflict {
  /** The resource that claims a route another resource claimed first. */
  readonly resource: string;
  readonly message: string;
}

/**
 * Every pair of webhook resources that claim the same method and path on one host:port (what
 * start() would refuse), reported on the later one. `app.check()` finds only the first.
 */
export function findRouteConflicts(sources: ReadonlyMap<string, WebhookSource>): RouteConflict[] {
  const owners = new Map<string, string>();
  const conflicts: RouteConflict[] = [];
  for (const [name, source] of sources) {
    const { host, port, path, methods } = source.options;
    const clashes = new Map<string, string[]>();
    for (const method of methods) {
      const key = `${host}|${port}|${path}|${method}`;
      const owner = owners.get(key);
      if (owner === undefined) owners.set(key, name);
      else clashes.set(owner, [...(clashes.get(owner) ?? []), method]);
    }
    for (const [owner, clashing] of clashes) {
      conflicts.push({
        resource: name,
        message: `duplicate route: ${clashing.join(", ")} ${path} on ${host}:${port} is claimed by resources.${owner} too`,
      });
    }
  }
  return conflicts;
}
