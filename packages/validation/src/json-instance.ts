import { toPointer } from './json-pointer';

/**
 * Why an instance was refused before schema validation: it nests deeper than the limit, or it
 * is not a JSON tree (a function, symbol, bigint, undefined, a class instance, a shared or
 * cyclic reference).
 */
export type InstanceRefusal = { readonly reason: 'depth' | 'not_json'; readonly instancePath: string };

export type InstanceCopy = { readonly ok: true; readonly value: unknown } | ({ readonly ok: false } & InstanceRefusal);

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

class Refused {
  constructor(
    readonly reason: 'depth' | 'not_json',
    readonly segments: (string | number)[],
  ) {}
}

/**
 * One recursive pass. Recursion is bounded by `maxDepth` (at most 128 frames), so it cannot
 * overflow the stack; the path is only built when a value is refused.
 */
function copyValue(source: unknown, depth: number, maxDepth: number, seen: Set<object>, nullPrototype: boolean): unknown {
  switch (typeof source) {
    case 'string':
    case 'number':
    case 'boolean':
      return source;
    case 'object':
      break;
    default:
      throw new Refused('not_json', []);
  }
  if (source === null) return null;
  if (depth + 1 > maxDepth) throw new Refused('depth', []);
  // A JSON document is a tree: a shared or cyclic reference is refused rather than copied,
  // because a DAG of shared objects can be exponentially large when walked.
  if (seen.has(source)) throw new Refused('not_json', []);
  seen.add(source);
  if (Array.isArray(source)) {
    const array: unknown[] = new Array(source.length);
    for (let i = 0; i < source.length; i++) {
      try {
        array[i] = copyValue(source[i], depth + 1, maxDepth, seen, nullPrototype);
      } catch (error) {
        if (error instanceof Refused) error.segments.unshift(i);
        throw error;
      }
    }
    return array;
  }
  if (!isPlainObject(source)) throw new Refused('not_json', []);
  // A null-prototype object: assigning `__proto__` creates an own data property (there is no
  // inherited setter), and ajv's default assignment sees only own keys. Ordinary objects are
  // much faster in V8, so they are used whenever the schema names no Object.prototype member.
  const object = (nullPrototype ? Object.create(null) : {}) as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    try {
      const child = copyValue((source as Record<string, unknown>)[key], depth + 1, maxDepth, seen, nullPrototype);
      if (!nullPrototype && key === '__proto__')
        Object.defineProperty(object, key, { value: child, writable: true, enumerable: true, configurable: true });
      else object[key] = child;
    } catch (error) {
      if (error instanceof Refused) error.segments.unshift(key);
      throw error;
    }
  }
  return object;
}

/**
 * Copies a JSON instance into fresh containers, refusing it at `maxDepth` (the root container
 * is depth 1). Objects are copied with a null prototype: ajv's checks and default assignment
 * then see only own keys, so `constructor` or `__proto__` in the arguments are ordinary names
 * and an absent `constructor` is absent. `toPlainObjects` turns the result back into ordinary
 * objects.
 */
export function copyInstance(value: unknown, maxDepth: number, nullPrototype = true): InstanceCopy {
  try {
    return { ok: true, value: copyValue(value, 0, maxDepth, new Set(), nullPrototype) };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, reason: error.reason, instancePath: toPointer(error.segments) };
    throw error;
  }
}

function plain(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(plain);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const child = plain((value as Record<string, unknown>)[key]);
    // Define rather than assign only where assignment would hit Object.prototype's setter.
    if (key === '__proto__') Object.defineProperty(out, key, { value: child, writable: true, enumerable: true, configurable: true });
    else out[key] = child;
  }
  return out;
}

/**
 * Rebuilds null-prototype objects (from copyInstance, after ajv applied defaults) as ordinary
 * objects. The input is a tree already bounded in depth by copyInstance, so recursion is safe.
 */
export function toPlainObjects(value: unknown): unknown {
  return plain(value);
}

/**
 * Whether ajv must see null-prototype objects for this schema: only when the schema names a
 * member of Object.prototype (`constructor`, `toString`, `__proto__`, …), where a default or a
 * check would otherwise read the inherited member.
 */
const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype).map((name) => `"${name}"`);

export function schemaNamesPrototypeMember(schema: unknown): boolean {
  const text = JSON.stringify(schema);
  return PROTOTYPE_NAMES.some((name) => text.includes(name));
}
