import type { EgressDecision } from '@veetbot/ports';
import type { ToolResultInput } from '@veetbot/domain';
import { toolFailure } from '../tool-result-helpers';

/**
 * web.fetch's failures (docs/adr/0078), each a `tool.{kind}.{detail}` code with its own fixed
 * message in the domain's table. `detail` is operator-facing and names no resolved address.
 */
export const WEB_FETCH_CODES = {
  url_invalid: 'tool.invalid_arguments.web_url_invalid',
  scheme_refused: 'tool.permission.web_scheme_refused',
  host_not_allowed: 'tool.permission.web_host_not_allowed',
  address_refused: 'tool.permission.web_address_refused',
  resolve_failed: 'tool.transport.web_resolve_failed',
  connect_failed: 'tool.transport.web_connect_failed',
  timeout: 'tool.timeout.web_fetch',
  too_large: 'tool.output_too_large.web_body',
  content_type: 'tool.invalid_arguments.web_content_type',
  redirects: 'tool.upstream_error.web_redirects',
  bad_response: 'tool.upstream_error.web_response',
} as const;

type Refusal = Extract<EgressDecision, { allowed: false }>;

/** The egress policy's refusal (at the first hop or any redirect) as web.fetch's failure. */
export function egressFailure(refusal: Refusal, hop: number): ToolResultInput {
  const where = hop === 0 ? 'the URL' : `redirect hop ${hop}`;
  switch (refusal.code) {
    case 'egress.scheme_refused':
      return toolFailure('permission', 'web_scheme_refused', `Egress refused ${where}: scheme not permitted.`);
    case 'egress.host_not_allowed':
      return toolFailure('permission', 'web_host_not_allowed', `Egress refused ${where}: host not on the allowlist.`);
    case 'egress.address_refused':
      return toolFailure('permission', 'web_address_refused', `Egress refused ${where}: ${refusal.message}`);
    case 'egress.resolve_failed':
      return toolFailure('transport', 'web_resolve_failed', `The host of ${where} did not resolve.`, true);
    case 'egress.url_invalid':
      return toolFailure('invalid_arguments', 'web_url_invalid', `Egress refused ${where}: the URL is not valid.`);
  }
}
