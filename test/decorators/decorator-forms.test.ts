import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { Module, Task } from "../../src/index";
import { readmeTsconfig } from "../helpers/readme";

const ROOT = join(__dirname, "../../..");
const run = promisify(execFile);
const FIXTURES = join(ROOT, "test/decorators/fixtures");

/**
 * A project with the README's tsconfig.json (changed only as `options` say) and the two
 * fixtures as its sources; the package is this checkout's build, linked.
 */
async function compileFixtures(work: string, name: string, options: Record<string, unknown>): Promise<string> {
  const dir = join(work, name);
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  symlinkSync(ROOT, join(dir, "node_modules", "webhook-tasks"), "dir");
  symlinkSync(join(ROOT, "node_modules/@types"), join(dir, "node_modules", "@types"), "dir");
  const tsconfig = readmeTsconfig();
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ ...tsconfig, compilerOptions: { ...tsconfig.compilerOptions, ...options } }, null, 2));
  cpSync(FIXTURES, join(dir, "src"), { recursive: true, filter: (f) => !f.endsWith(".js") });
  const tsc = await run(join(ROOT, "node_modules/.bin/tsc"), ["-p", dir], { cwd: dir }).catch((e: { stdout: string }) => e);
  expect("stdout" in tsc ? tsc.stdout : "", `${name}: tsc reported errors`).to.equal("");
  return dir;
}

describe("decorators: standard (TypeScript's default) and legacy (experimentalDecorators)", function () {
  this.timeout(60_000);
  let work: string;
  before(() => (work = mkdtempSync(join(tmpdir(), "webhook-tasks-decorators-"))));
  after(() => rmSync(work, { recursive: true, force: true }));

  it("the same app compiles in both forms (the same mistakes refused), registers the same tasks and gives the same results", async () => {
    expect(readmeTsconfig().compilerOptions.experimentalDecorators, "the README's tsconfig uses the default").to.equal(undefined);
    const standard = await compileFixtures(work, "standard", {});
    const legacy = await compileFixtures(work, "legacy", { experimentalDecorators: true });
    // Each compile produced the form it is meant to test.
    expect(readFileSync(join(standard, "dist/decorated-app.js"), "utf8")).to.contain("__esDecorate").and.not.contain("__decorate(");
    expect(readFileSync(join(legacy, "dist/decorated-app.js"), "utf8")).to.contain("__decorate(").and.not.contain("__esDecorate");

    const outputs = await Promise.all([standard, legacy].map(async (dir) => (await run(process.execPath, [join(dir, "dist/decorated-app.js")], { cwd: dir })).stdout.trim()));
    expect(JSON.parse(outputs[0])).to.deep.equal({
      tasks: ["PushHandlers.audit", "PushHandlers.receive", "record-push"],
      status: 202,
      seen: ["record-push repo:octo/repo", "audit PushHandlers.audit 14"],
    });
    expect(outputs[1]).to.equal(outputs[0]);
  });

  it("applied to something that is neither form's method (or class): a clear error", () => {
    const task = Task({ source: "q" }) as unknown as (...args: unknown[]) => void;
    const misuse = /^@Task decorates a method of a handler class, as in `@Task\(\{ source \}\) async handle\(ctx, event\) \{\}`; here it was applied to something else$/;
    expect(() => task()).to.throw(TypeError, misuse);
    expect(() => task(class {})).to.throw(TypeError, misuse);
    expect(() => task(() => undefined, { notAKind: true })).to.throw(TypeError, misuse);
    // Standard contexts of other kinds, or a method @Task cannot call by name.
    expect(() => task(undefined, { kind: "field", name: "handler" })).to.throw(TypeError, "@Task can only decorate methods; handler is a field");
    expect(() => task(class {}, { kind: "class", name: "Handlers" })).to.throw(TypeError, "@Task can only decorate methods; Handlers is a class");
    expect(() => task(async () => undefined, { kind: "method", name: "onPush", static: true, private: false, metadata: {} })).to.throw(TypeError, "@Task onPush: a task method is a public instance method, not static");
    expect(() => task(async () => undefined, { kind: "method", name: "#onPush", static: false, private: true, metadata: {} })).to.throw(TypeError, "not private (#)");
    expect(() => task(async (_a: unknown, _b: unknown, _c: unknown) => undefined, { kind: "method", name: "three", static: false, private: false, metadata: {} })).to.throw(TypeError, "@Task three: a task takes (ctx, event), not 3 parameters");
    expect(() => task(async () => undefined, { kind: "method", name: "onPush", static: false, private: false, metadata: undefined })).to.throw(TypeError, "the compiler passed no decorator metadata");

    const module = Module({ name: "m", handlers: [] }) as unknown as (...args: unknown[]) => void;
    const moduleMisuse = "@Module decorates a class, as in `@Module({ name, handlers }) export class AppModule {}`; here it was applied to something else";
    expect(() => module({}, "method", {})).to.throw(TypeError, moduleMisuse);
    expect(() => module(async () => undefined, { kind: "method", name: "m" })).to.throw(TypeError, moduleMisuse);
  });

  it("legacy form: a static method is refused as the standard form refuses it (its task was recorded on Function and never ran)", () => {
    // This test file is compiled with experimentalDecorators: the legacy form, as TypeScript calls it.
    expect(() => {
      class StaticHandlers {
        @Task({ source: "static-q" })
        static async onPush(_ctx: unknown, _event: unknown): Promise<void> {}
      }
      return StaticHandlers;
    }).to.throw(TypeError, "@Task StaticHandlers.onPush: a task method is a public instance method, not static");
    expect(Reflect.getOwnMetadata(Symbol.for("webhook-tasks:tasks"), Function)).to.equal(undefined);
  });
});
