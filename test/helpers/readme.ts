import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(__dirname, "../../..");

/** The README's fenced blocks of one language under a `##`/`###` heading, in order. */
function blocksUnder(heading: string, lang: string): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.search(new RegExp(`^#{2,3} ${heading}\\s*$`, "m"));
  if (start < 0) throw new Error(`README.md has no heading "${heading}"`);
  const rest = readme.slice(start);
  const body = rest.indexOf("\n") + 1;
  const next = rest.slice(body).search(/^#{2,3} /m);
  const section = next < 0 ? rest : rest.slice(0, body + next);
  return [...section.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map((m) => m[1]);
}

/** The README's tsconfig.json, parsed, exactly as a user copies it. */
export function readmeTsconfig(): { compilerOptions: Record<string, unknown>; include?: string[] } {
  const [json] = blocksUnder("tsconfig.json", "json");
  if (json === undefined) throw new Error("README.md: no json block under ### tsconfig.json");
  return JSON.parse(json) as { compilerOptions: Record<string, unknown>; include?: string[] };
}

/**
 * The README's install commands for a packed tarball: the `npm install` line of the `.tgz`
 * and every `npm install --save-dev` line, as argument lists (comments dropped).
 */
export function readmeInstallCommands(): string[][] {
  const [sh] = blocksUnder("Install", "sh");
  if (sh === undefined) throw new Error("README.md: no sh block under ## Install");
  const lines = sh
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => /^npm install (\S+\.tgz|--save-dev )/.test(line));
  return lines.map((line) => line.split(/\s+/).slice(2));
}
