/**
 * A strict parser of the Prometheus text exposition format (0.0.4): every line must be a
 * HELP, a TYPE, a comment, blank, or a well-formed sample of a declared family; label values
 * are unescaped; a series seen twice, a sample before its TYPE, or a bad number is an error.
 */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  type: string;
  help: string | undefined;
  readonly samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES: Record<string, readonly string[]> = {
  counter: ["", "_total"],
  gauge: [""],
  untyped: [""],
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"],
};

export class Exposition {
  constructor(readonly families: ReadonlyMap<string, Family>) {}

  family(name: string): Family {
    const family = this.families.get(name);
    if (family === undefined) throw new Error(`no metric family ${name}`);
    return family;
  }

  /** The value of the one sample named `name` whose labels include `labels`; throws unless exactly one matches. */
  value(name: string, labels: Record<string, string> = {}): number {
    const matches = this.samples(name, labels);
    if (matches.length !== 1) throw new Error(`${matches.length} samples of ${name} match ${JSON.stringify(labels)}`);
    return matches[0].value;
  }

  /** Samples named `name` whose labels include `labels`. */
  samples(name: string, labels: Record<string, string> = {}): Sample[] {
    const out: Sample[] = [];
    for (const family of this.families.values()) {
      for (const sample of family.samples) {
        if (sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v)) out.push(sample);
      }
    }
    return out;
  }
}

export function parseExposition(text: string): Exposition {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const lines = text.split("\n");
  if (lines[lines.length - 1] !== "") throw new Error("the exposition must end with a newline");
  lines.pop();
  lines.forEach((line, index) => {
    const where = `line ${index + 1} (${JSON.stringify(line)})`;
    if (line === "") return;
    if (line.startsWith("#")) {
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (meta === null) return; // a plain comment
      const [, kind, name, rest] = meta;
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
      const family = families.get(name) ?? { name, type: "untyped", help: undefined, samples: [] };
      if (kind === "TYPE") {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type`);
        if (family.samples.length > 0 || (families.has(name) && family.type !== "untyped")) throw new Error(`${where}: TYPE after samples or twice`);
        family.type = rest;
      } else {
        if (family.help !== undefined) throw new Error(`${where}: HELP twice`);
        family.help = rest.replace(/\\(n|\\)/g, (_, c: string) => (c === "n" ? "\n" : "\\"));
      }
      families.set(name, family);
      return;
    }
    const { name, labels, value } = parseSample(line, where);
    const family = familyOf(name, families);
    if (family === undefined) throw new Error(`${where}: sample of an undeclared family`);
    const key = `${name}{${Object.keys(labels).sort().map((k) => `${k}=${JSON.stringify(labels[k])}`).join(",")}}`;
    if (seen.has(key)) throw new Error(`${where}: series ${key} twice`);
    seen.add(key);
    family.samples.push({ name, labels, value });
  });
  return new Exposition(families);
}

function familyOf(sampleName: string, families: Map<string, Family>): Family | undefined {
  for (const family of families.values()) {
    for (const suffix of SUFFIXES[family.type]) if (family.name + suffix === sampleName) return family;
  }
  return undefined;
}

function parseSample(line: string, where: string): Sample {
  let at = 0;
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (nameMatch === null) throw new Error(`${where}: no metric name`);
  const name = nameMatch[0];
  at = name.length;
  const labels: Record<string, string> = {};
  if (line[at] === "{") {
    at++;
    while (line[at] !== "}") {
      const labelMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(at));
      if (labelMatch === null || !LABEL_NAME.test(labelMatch[0])) throw new Error(`${where}: bad label name`);
      const label = labelMatch[0];
      at += label.length;
      if (line.slice(at, at + 2) !== '="') throw new Error(`${where}: expected =" after ${label}`);
      at += 2;
      let value = "";
      for (;;) {
        const c = line[at];
        if (c === undefined) throw new Error(`${where}: unterminated label value`);
        at++;
        if (c === '"') break;
        if (c === "\\") {
          const e = line[at++];
          if (e === "n") value += "\n";
          else if (e === "\\" || e === '"') value += e;
          else throw new Error(`${where}: bad escape \\${e}`);
        } else value += c;
      }
      if (label in labels) throw new Error(`${where}: label ${label} twice`);
      labels[label] = value;
      if (line[at] === ",") at++;
      else if (line[at] !== "}") throw new Error(`${where}: expected , or } after a label`);
    }
    at++;
  }
  if (line[at] !== " ") throw new Error(`${where}: expected a space before the value`);
  const parts = line.slice(at + 1).split(" ");
  if (parts.length > 2 || parts[0] === "") throw new Error(`${where}: expected a value and an optional timestamp`);
  const value = parseValue(parts[0], where);
  if (parts.length === 2 && !/^-?\d+$/.test(parts[1])) throw new Error(`${where}: bad timestamp`);
  return { name, labels, value };
}

function parseValue(text: string, where: string): number {
  // Go's ParseFloat, which Prometheus uses, takes these in any case (prom-client writes "Nan").
  const lower = text.toLowerCase();
  if (lower === "+inf" || lower === "inf") return Infinity;
  if (lower === "-inf") return -Infinity;
  if (lower === "nan") return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`${where}: bad value ${text}`);
  return Number(text);
}
