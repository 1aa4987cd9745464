import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";

/** The console's static files: its whole JavaScript and CSS, and its icon. */
export const ASSET_FILES = ["console.css", "console.js", "favicon.svg"] as const;
export type AssetFile = (typeof ASSET_FILES)[number];

const TYPES: Record<string, string> = { css: "text/css; charset=utf-8", js: "text/javascript; charset=utf-8", svg: "image/svg+xml" };

interface Asset {
  /** Served under this name: the content's hash in it, so it can be cached for good. */
  readonly name: string;
  readonly type: string;
  readonly body: Buffer;
  readonly gzipped: Buffer;
  readonly etag: string;
}

/**
 * Where the assets are: beside the compiled module (the build copies them to dist/src/console/
 * assets, and the package ships that folder), else in the source tree of a checkout that was
 * compiled by tsc alone.
 */
export function assetDirectory(): string {
  const candidates = [join(__dirname, "assets"), resolve(__dirname, "../../../src/console/assets")];
  const found = candidates.find((dir) => ASSET_FILES.every((file) => existsSync(join(dir, file))));
  if (found === undefined) throw new Error(`the console's assets (${ASSET_FILES.join(", ")}) are missing from ${candidates[0]}: the package's build copies them there`);
  return found;
}

export class ConsoleAssets {
  private readonly byName = new Map<string, Asset>();
  private readonly byFile = new Map<AssetFile, Asset>();

  constructor(dir = assetDirectory()) {
    for (const file of ASSET_FILES) {
      const body = readFileSync(join(dir, file));
      const dot = file.lastIndexOf(".");
      const hash = createHash("sha256").update(body).digest("hex").slice(0, 12);
      const asset: Asset = {
        name: `${file.slice(0, dot)}.${hash}${file.slice(dot)}`,
        type: TYPES[file.slice(dot + 1)],
        body,
        gzipped: gzipSync(body, { level: 9 }),
        etag: `"${hash}"`,
      };
      this.byName.set(asset.name, asset);
      this.byFile.set(file, asset);
    }
  }

  /** The served name of a file ("console.3f2a9c01b2d4.css"). */
  nameOf(file: AssetFile): string {
    return this.byFile.get(file)!.name;
  }

  /** Bytes of the script and the stylesheet together, gzipped as served. */
  get gzippedBytes(): number {
    return [this.byFile.get("console.css")!, this.byFile.get("console.js")!].reduce((sum, a) => sum + a.gzipped.length, 0);
  }

  /** Answers a request for `name`; false when there is no such asset. */
  serve(name: string, req: IncomingMessage, res: ServerResponse): boolean {
    const asset = this.byName.get(name);
    if (asset === undefined) return false;
    res.setHeader("content-type", asset.type);
    res.setHeader("cache-control", "public, max-age=31536000, immutable");
    res.setHeader("etag", asset.etag);
    res.setHeader("vary", "accept-encoding");
    if (req.headers["if-none-match"] === asset.etag) {
      res.statusCode = 304;
      res.end();
      return true;
    }
    const gzip = /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
    const body = gzip ? asset.gzipped : asset.body;
    if (gzip) res.setHeader("content-encoding", "gzip");
    res.setHeader("content-length", body.length);
    res.end(req.method === "HEAD" ? undefined : body);
    return true;
  }
}
