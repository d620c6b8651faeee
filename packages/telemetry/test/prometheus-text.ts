/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for the tests: it throws on
 * anything the format does not allow rather than skipping it. (parse-prometheus-text-format was
 * tried first and drops the labels of a labelled histogram, so it cannot check this table.)
 *
 * Checked: line grammar (metric and label names, quoted label values with only \\, \" and \n
 * escapes, float values including ±Inf and NaN, optional timestamp); HELP and TYPE at most once
 * per family and TYPE before its samples; a family's samples contiguous; sample names allowed by
 * the family's type (a histogram's only as _bucket with `le`, _sum, _count); no duplicate
 * series; for every histogram series: cumulative buckets, a +Inf bucket equal to _count, a _sum.
 */

export type FamilyType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Series {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface HistogramSeries {
  readonly labels: Readonly<Record<string, string>>;
  /** Upper bound (as written, e.g. "0.5", "+Inf") → cumulative count. */
  readonly buckets: ReadonlyMap<string, number>;
  readonly sum: number;
  readonly count: number;
}

export interface Family {
  readonly name: string;
  readonly type: FamilyType;
  readonly help: string;
  /** Every sample line, as written (for a histogram: its _bucket, _sum and _count lines). */
  readonly samples: ReadonlyArray<Series & { readonly name: string }>;
  /** For a histogram: one entry per label set (without `le`). */
  readonly histograms: readonly HistogramSeries[];
}

export class ExpositionError extends Error {}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const FLOAT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const TYPES: readonly FamilyType[] = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

/** Go's strconv.ParseFloat, which Prometheus uses: decimals, and Inf/Infinity/NaN in any case. */
function parseValue(token: string, line: string): number {
  if (FLOAT.test(token)) return Number(token);
  const lower = token.toLowerCase();
  if (lower === 'nan') return Number.NaN;
  if (/^[+]?inf(inity)?$/.test(lower)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/.test(lower)) return Number.NEGATIVE_INFINITY;
  throw new ExpositionError(`bad value ${JSON.stringify(token)} in: ${line}`);
}

interface RawSample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

function parseSampleLine(line: string): RawSample {
  let i = 0;
  while (i < line.length && line[i] !== '{' && line[i] !== ' ') i++;
  const name = line.slice(0, i);
  if (!METRIC_NAME.test(name)) throw new ExpositionError(`bad metric name in: ${line}`);
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    while (line[i] !== '}') {
      const eq = line.indexOf('=', i);
      if (eq < 0) throw new ExpositionError(`unterminated labels in: ${line}`);
      const labelName = line.slice(i, eq);
      if (!LABEL_NAME.test(labelName)) throw new ExpositionError(`bad label name ${JSON.stringify(labelName)} in: ${line}`);
      if (labelName in labels) throw new ExpositionError(`duplicate label ${labelName} in: ${line}`);
      i = eq + 1;
      if (line[i] !== '"') throw new ExpositionError(`unquoted label value in: ${line}`);
      i++;
      let value = '';
      for (;;) {
        const c = line[i];
        if (c === undefined) throw new ExpositionError(`unterminated label value in: ${line}`);
        if (c === '"') break;
        if (c === '\\') {
          const next = line[i + 1];
          if (next === '\\') value += '\\';
          else if (next === '"') value += '"';
          else if (next === 'n') value += '\n';
          else throw new ExpositionError(`bad escape in: ${line}`);
          i += 2;
          continue;
        }
        value += c;
        i++;
      }
      labels[labelName] = value;
      i++;
      if (line[i] === ',') i++;
      else if (line[i] !== '}') throw new ExpositionError(`expected , or } in: ${line}`);
    }
    i++;
  }
  if (line[i] !== ' ') throw new ExpositionError(`expected a space before the value in: ${line}`);
  const rest = line.slice(i + 1).split(' ');
  if (rest.length < 1 || rest.length > 2 || rest.some((t) => t === '')) throw new ExpositionError(`bad value or timestamp in: ${line}`);
  if (rest[1] !== undefined && !/^-?\d+$/.test(rest[1])) throw new ExpositionError(`bad timestamp in: ${line}`);
  return { name, labels, value: parseValue(rest[0]!, line) };
}

function familyOf(sampleName: string, type: FamilyType | undefined, familyName: string): boolean {
  if (type === 'histogram')
    return sampleName === `${familyName}_bucket` || sampleName === `${familyName}_sum` || sampleName === `${familyName}_count`;
  if (type === 'summary') return sampleName === familyName || sampleName === `${familyName}_sum` || sampleName === `${familyName}_count`;
  return sampleName === familyName;
}

const keyOf = (labels: Record<string, string>) =>
  JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );

export function parseExposition(text: string): Family[] {
  if (text !== '' && !text.endsWith('\n')) throw new ExpositionError('the exposition must end with a newline');
  interface Building {
    name: string;
    type: FamilyType | undefined;
    help: string | undefined;
    samples: Array<RawSample>;
  }
  const families = new Map<string, Building>();
  const closed = new Set<string>();
  const state: { current: Building | null } = { current: null };
  const open = (name: string): Building => {
    if (state.current?.name === name) return state.current;
    if (closed.has(name) || families.has(name)) throw new ExpositionError(`family ${name} is not contiguous`);
    if (state.current) closed.add(state.current.name);
    const created: Building = { name, type: undefined, help: undefined, samples: [] };
    state.current = created;
    families.set(name, created);
    return created;
  };

  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const help = /^# HELP (\S+) (.*)$/.exec(line) ?? /^# HELP (\S+)$/.exec(line);
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (help) {
        if (!METRIC_NAME.test(help[1]!)) throw new ExpositionError(`bad name in: ${line}`);
        const f = open(help[1]!);
        if (f.help !== undefined) throw new ExpositionError(`second HELP for ${f.name}`);
        f.help = help[2] ?? '';
      } else if (type) {
        if (!METRIC_NAME.test(type[1]!)) throw new ExpositionError(`bad name in: ${line}`);
        if (!TYPES.includes(type[2] as FamilyType)) throw new ExpositionError(`unknown type in: ${line}`);
        const f = open(type[1]!);
        if (f.type !== undefined) throw new ExpositionError(`second TYPE for ${f.name}`);
        if (f.samples.length > 0) throw new ExpositionError(`TYPE after samples for ${f.name}`);
        f.type = type[2] as FamilyType;
      } else if (line.startsWith('# HELP') || line.startsWith('# TYPE')) {
        throw new ExpositionError(`malformed metadata: ${line}`);
      }
      continue;
    }
    const sample = parseSampleLine(line);
    const building = state.current;
    const f = building !== null && familyOf(sample.name, building.type, building.name) ? building : open(sample.name);
    if (!familyOf(sample.name, f.type, f.name))
      throw new ExpositionError(`sample ${sample.name} does not belong to ${f.type ?? 'untyped'} family ${f.name}`);
    f.samples.push(sample);
  }

  return [...families.values()].map((f) => {
    const type = f.type ?? 'untyped';
    const seen = new Set<string>();
    for (const s of f.samples) {
      const key = `${s.name}${keyOf(s.labels)}`;
      if (seen.has(key)) throw new ExpositionError(`duplicate series ${key}`);
      seen.add(key);
    }
    return {
      name: f.name,
      type,
      help: f.help ?? '',
      samples: f.samples,
      histograms: type === 'histogram' ? histogramsOf(f.name, f.samples) : [],
    };
  });
}

function histogramsOf(name: string, samples: readonly RawSample[]): HistogramSeries[] {
  const byLabels = new Map<string, { labels: Record<string, string>; buckets: Array<[string, number]>; sum?: number; count?: number }>();
  for (const s of samples) {
    const { le, ...labels } = s.labels;
    const key = keyOf(labels);
    const entry = byLabels.get(key) ?? { labels, buckets: [] };
    byLabels.set(key, entry);
    if (s.name === `${name}_bucket`) {
      if (le === undefined) throw new ExpositionError(`${name}_bucket without le`);
      entry.buckets.push([le, s.value]);
    } else {
      if (le !== undefined) throw new ExpositionError(`${s.name} with an le label`);
      if (s.name === `${name}_sum`) entry.sum = s.value;
      else entry.count = s.value;
    }
  }
  return [...byLabels.values()].map((e) => {
    const bounds = e.buckets.map(([le]) => parseValue(le, `le="${le}"`));
    for (let i = 1; i < e.buckets.length; i++) {
      if (!(bounds[i]! > bounds[i - 1]!)) throw new ExpositionError(`${name}: bucket bounds not increasing`);
      if (e.buckets[i]![1] < e.buckets[i - 1]![1]) throw new ExpositionError(`${name}: buckets not cumulative`);
    }
    const inf = e.buckets.at(-1);
    if (inf === undefined || bounds.at(-1) !== Number.POSITIVE_INFINITY) throw new ExpositionError(`${name}: no +Inf bucket`);
    if (e.sum === undefined || e.count === undefined) throw new ExpositionError(`${name}: _sum or _count missing`);
    if (inf[1] !== e.count) throw new ExpositionError(`${name}: +Inf bucket ${inf[1]} != _count ${e.count}`);
    return { labels: e.labels, buckets: new Map(e.buckets), sum: e.sum, count: e.count };
  });
}

export function family(families: readonly Family[], name: string): Family {
  const found = families.find((f) => f.name === name);
  if (!found) throw new Error(`metric family ${name} is missing`);
  return found;
}

/** The label names of every series of a family (for a histogram, without `le`), sorted. */
export function labelNamesOf(f: Family): string[][] {
  const series = f.type === 'histogram' ? f.histograms : f.samples;
  return series.map((s) => Object.keys(s.labels).sort());
}

function sameLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  return keyOf({ ...a }) === keyOf({ ...b });
}

/** The value of the counter series whose labels are exactly `labels`; undefined when absent. */
export function counterValue(families: readonly Family[], name: string, labels: Record<string, string>): number | undefined {
  return family(families, name).samples.find((s) => sameLabels(s.labels, labels))?.value;
}

export function histogramSeries(families: readonly Family[], name: string, labels: Record<string, string>): HistogramSeries | undefined {
  return family(families, name).histograms.find((h) => sameLabels(h.labels, labels));
}
