/** Canonical 8-4-4-4-12 hex UUID; artifact ids name files, so nothing looser is accepted. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isArtifactId(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
