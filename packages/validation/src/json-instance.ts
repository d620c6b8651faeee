import { toPointer } from './json-pointer';

/**
 * Why an instance was refused before schema validation: it nests deeper than the limit, or it
 * is not a JSON tree (a function, symbol, bigint, undefined, a class instance, a shared or
 * cyclic reference).
 */
export type InstanceRefusal = { readonly reason: 'depth' | 'not_json'; readonly instancePath: string };

export type InstanceCopy = { readonly ok: true; readonly value: unknown } | ({ readonly ok: false } & InstanceRefusal);

interface Frame {
  readonly source: unknown;
  readonly depth: number;
  readonly parent: Frame | undefined;
  readonly key: string | number | undefined;
  /** Where the copy goes: a container and the key to define on it. */
  readonly into: Record<string, unknown> | unknown[] | undefined;
}

function pathOf(frame: Frame): string {
  const segments: (string | number)[] = [];
  for (let f: Frame | undefined = frame; f?.key !== undefined; f = f.parent) segments.push(f.key);
  return toPointer(segments.reverse());
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Defines rather than assigns, so a key named `__proto__` stays an own data property. */
function define(into: Record<string, unknown> | unknown[], key: string | number, value: unknown): void {
  Object.defineProperty(into, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * Copies a JSON instance into fresh containers, iteratively (no recursion, so depth cannot
 * overflow the stack), refusing it at `maxDepth` (the root container is depth 1). Objects are
 * copied with a null prototype: ajv's checks and default assignment then see only own keys,
 * so `constructor` or `__proto__` in the arguments are ordinary names and an absent
 * `constructor` is absent. `toPlainObjects` turns the result back into ordinary objects.
 */
export function copyInstance(value: unknown, maxDepth: number): InstanceCopy {
  const seen = new Set<object>();
  const root: { value?: unknown } = {};
  const stack: Frame[] = [{ source: value, depth: 0, parent: undefined, key: undefined, into: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { source } = frame;
    let copy: unknown;
    switch (typeof source) {
      case 'string':
      case 'number':
      case 'boolean':
        copy = source;
        break;
      case 'object': {
        if (source === null) {
          copy = null;
          break;
        }
        const depth = frame.depth + 1;
        if (depth > maxDepth) return { ok: false, reason: 'depth', instancePath: pathOf(frame) };
        // A JSON document is a tree: a shared or cyclic reference is refused rather than
        // copied, because a DAG of shared objects can be exponentially large when walked.
        if (seen.has(source)) return { ok: false, reason: 'not_json', instancePath: pathOf(frame) };
        seen.add(source);
        if (Array.isArray(source)) {
          const array: unknown[] = new Array(source.length);
          for (let i = source.length - 1; i >= 0; i--) {
            stack.push({ source: source[i], depth, parent: frame, key: i, into: array });
          }
          copy = array;
        } else if (isPlainObject(source)) {
          const object = Object.create(null) as Record<string, unknown>;
          const keys = Object.keys(source);
          for (let i = keys.length - 1; i >= 0; i--) {
            const key = keys[i]!;
            stack.push({ source: (source as Record<string, unknown>)[key], depth, parent: frame, key, into: object });
          }
          copy = object;
        } else {
          return { ok: false, reason: 'not_json', instancePath: pathOf(frame) };
        }
        break;
      }
      default:
        return { ok: false, reason: 'not_json', instancePath: pathOf(frame) };
    }
    if (frame.into === undefined) root.value = copy;
    else define(frame.into, frame.key!, copy);
  }
  return { ok: true, value: root.value };
}

/**
 * Rebuilds null-prototype objects (from copyInstance, after ajv applied defaults) as ordinary
 * objects, iteratively. The input is a tree already bounded in depth.
 */
export function toPlainObjects(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const root = Array.isArray(value) ? new Array(value.length) : {};
  const stack: [unknown, Record<string, unknown> | unknown[]][] = [[value, root]];
  while (stack.length > 0) {
    const [source, target] = stack.pop()!;
    for (const key of Object.keys(source as object)) {
      const child = (source as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) {
        const copy = Array.isArray(child) ? new Array(child.length) : {};
        define(target, Array.isArray(target) ? Number(key) : key, copy);
        stack.push([child, copy]);
      } else {
        define(target, Array.isArray(target) ? Number(key) : key, child);
      }
    }
  }
  return root;
}
