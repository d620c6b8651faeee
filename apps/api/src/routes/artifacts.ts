import { readArtifact } from '@veetbot/blob-store-folder';
import { notFound } from '../api-error';
import type { ApiDeps } from '../deps';
import { idParam } from '../params';
import type { RouteTable } from '../routing';

/**
 * § Output: "a client reads the whole capture through the owner-scoped artifact routes". The
 * metadata row is read under the tenant's row-level security first: another tenant's id has no
 * row here, so it is the same 404 as a missing one, and no bytes are ever read for it.
 */
export function artifactRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'get',
      path: '/v1/artifacts/:artifact_id',
      operationId: 'getArtifact',
      summary: "An artifact's bytes with its media type; its trust label and sha256 in headers.",
      tag: 'artifacts',
      responses: {
        200: {
          description: 'The bytes, checked against the recorded length and sha256.',
          raw: { contentType: 'application/octet-stream', schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
          headers: { 'X-Veetbot-Artifact-Trust': 'The trust label of the content.', 'X-Veetbot-Artifact-Sha256': 'sha256 of the bytes.' },
        },
      },
    },
    async (c, { principal }) => {
      const found = await readArtifact(
        { blobs: deps.blobs, artifacts: deps.stores.artifacts },
        principal.tenant_id,
        idParam(c, 'artifact_id'),
      );
      if (found === null) throw notFound();
      const { row, bytes } = found;
      return new Response(bytes, {
        status: 200,
        headers: {
          'Content-Type': row.mediaType,
          'Content-Length': String(bytes.byteLength),
          // Artifacts hold tool output, often external text: never sniffed or rendered inline as something else.
          'X-Content-Type-Options': 'nosniff',
          'Content-Disposition': 'attachment',
          'X-Veetbot-Artifact-Trust': row.trust,
          'X-Veetbot-Artifact-Sha256': row.sha256,
        },
      });
    },
  );
}
