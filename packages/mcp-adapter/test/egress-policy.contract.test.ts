import { describeEgressPolicyContract } from '@veetbot/port-contracts';
import { DefaultEgressPolicy } from '../src/index';
import { parseOperatorConfig } from '../src/config/operator-config';

// docs/adr/0030: ports.EgressPolicy has one implementation, configured four ways in a process:
// the default, the operator configuration's `mcp.egress` (the operator's own HTTP servers) and
// `mcp.tenant_egress` (tenant servers), read here exactly as apps/composition reads them, and
// the loopback policy the tests dial their scripted servers through. Each runs the contract;
// what the settings change (http, private addresses, the allowlist) is egress.test.ts's.
const operator = parseOperatorConfig(
  {
    mcp: {
      egress: { allow_http: true, allow_hosts: ['mcp.example.com', '*.corp.example'] },
      tenant_egress: { allow_hosts: ['*.tools.example.org'] },
    },
  },
  'contract.json',
);

describeEgressPolicyContract('DefaultEgressPolicy, default settings', {
  make: (resolve) => new DefaultEgressPolicy({ resolve }),
  admits: 'https://mcp.example.com/mcp',
});

describeEgressPolicyContract("DefaultEgressPolicy, the operator's mcp.egress", {
  make: (resolve) => new DefaultEgressPolicy({ ...operator.egress, resolve }),
  admits: 'https://a.corp.example/mcp',
});

describeEgressPolicyContract('DefaultEgressPolicy, mcp.tenant_egress', {
  make: (resolve) => new DefaultEgressPolicy({ ...operator.tenantEgress, resolve }),
  admits: 'https://a.tools.example.org/mcp',
});

describeEgressPolicyContract('DefaultEgressPolicy, loopback (tests)', {
  make: (resolve) => new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true, resolve }),
  admits: 'https://mcp.example.com/mcp',
});
