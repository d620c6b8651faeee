import { mcpToolName } from '@veetbot/domain';
import type { OperatorConfig } from '@veetbot/mcp-adapter';
import type { PolicyProfile } from '@veetbot/policy';

/** The denial a tenant's call of a URL-fetching operator tool ends with (docs/adr/0052). */
export const URL_FETCH_REFUSED = 'policy.egress.url_fetch_refused';

/**
 * docs/adr/0052: the policy the api and the worker evaluate is the profile plus, first, one deny
 * rule per operator server whose `url_fetching_tools` the operator has not opted in to
 * (`allow_url_fetching`). Such a tool fetches any URL its caller names from the worker's host —
 * loopback admin pages and the internal network included, around every tenant egress policy —
 * so its calls are refused whatever the profile says after it. The rule names each tool exactly
 * (its registry name) and its NETWORK_READ class (the adapter classifies it so), and, matching
 * every call of a tool unconditionally, it also keeps the tool out of every session's pin
 * (PolicyEngine.offers). An opted-in server adds no rule: its URL-fetching tools follow the
 * profile as any read does.
 */
export function withOperatorUrlFetchRules(profile: PolicyProfile, operator: Pick<OperatorConfig, 'servers'>): PolicyProfile {
  const rules: PolicyProfile['rules'] = operator.servers
    .filter((server) => (server.urlFetchingTools?.length ?? 0) > 0 && server.allowUrlFetching !== true)
    .map((server) => ({
      id: `operator-url-fetch-${server.serverId.replace(/_/g, '-')}`,
      when: {
        tools: server.urlFetchingTools!.map((name) => mcpToolName(server.serverId, name)),
        side_effects: ['network_read'],
      },
      effect: 'deny',
      reason_code: URL_FETCH_REFUSED,
    }));
  return rules.length === 0 ? profile : { ...profile, rules: [...rules, ...profile.rules] };
}
