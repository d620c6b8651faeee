import { POINTER_MAX_CHARS } from './limits';

/** RFC 6901 JSON Pointer from path segments. */
export function toPointer(segments: readonly (string | number)[]): string {
  let out = '';
  for (const segment of segments) {
    out += `/${String(segment).replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (out.length > POINTER_MAX_CHARS) break;
  }
  return boundPointer(out);
}

/**
 * A pointer is cut at POINTER_MAX_CHARS (ending in `…`): instance keys are model-produced
 * and a violation must not carry a 10 MB key back out.
 */
export function boundPointer(pointer: string): string {
  return pointer.length > POINTER_MAX_CHARS ? `${pointer.slice(0, POINTER_MAX_CHARS)}…` : pointer;
}

/** The segments of an RFC 6901 JSON Pointer ("" is the root; "/a~1b" is ["a/b"]). */
export function fromPointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}
