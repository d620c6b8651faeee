"use strict";
var __assign = (this && this.__assign) || function () {
    __assign = Object.assign || function(t) {
        for (var s, i = 1, n = arguments.length; i < n; i++) {
            s = arguments[i];
            for (var p in s) if (Object.prototype.hasOwnProperty.call(s, p))
                t[p] = s[p];
        }
        return t;
    };
    return __assign.apply(this, arguments);
};
var __awaiter = (this && this.__awaiter) || function (thisArg, _arguments, P, generator) {
    function adopt(value) { return value instanceof P ? value : new P(function (resolve) { resolve(value); }); }
    return new (P || (P = Promise))(function (resolve, reject) {
        function fulfilled(value) { try { step(generator.next(value)); } catch (e) { reject(e); } }
        function rejected(value) { try { step(generator["throw"](value)); } catch (e) { reject(e); } }
        function step(result) { result.done ? resolve(result.value) : adopt(result.value).then(fulfilled, rejected); }
        step((generator = generator.apply(thisArg, _arguments || [])).next());
    });
};
var __generator = (this && this.__generator) || function (thisArg, body) {
    var _ = { label: 0, sent: function() { if (t[0] & 1) throw t[1]; return t[1]; }, trys: [], ops: [] }, f, y, t, g = Object.create((typeof Iterator === "function" ? Iterator : Object).prototype);
    return g.next = verb(0), g["throw"] = verb(1), g["return"] = verb(2), typeof Symbol === "function" && (g[Symbol.iterator] = function() { return this; }), g;
    function verb(n) { return function (v) { return step([n, v]); }; }
    function step(op) {
        if (f) throw new TypeError("Generator is already executing.");
        while (g && (g = 0, op[0] && (_ = 0)), _) try {
            if (f = 1, y && (t = op[0] & 2 ? y["return"] : op[0] ? y["throw"] || ((t = y["return"]) && t.call(y), 0) : y.next) && !(t = t.call(y, op[1])).done) return t;
            if (y = 0, t) op = [op[0] & 2, t.value];
            switch (op[0]) {
                case 0: case 1: t = op; break;
                case 4: _.label++; return { value: op[1], done: false };
                case 5: _.label++; y = op[1]; op = [0]; continue;
                case 7: op = _.ops.pop(); _.trys.pop(); continue;
                default:
                    if (!(t = _.trys, t = t.length > 0 && t[t.length - 1]) && (op[0] === 6 || op[0] === 2)) { _ = 0; continue; }
                    if (op[0] === 3 && (!t || (op[1] > t[0] && op[1] < t[3]))) { _.label = op[1]; break; }
                    if (op[0] === 6 && _.label < t[1]) { _.label = t[1]; t = op; break; }
                    if (t && _.label < t[2]) { _.label = t[2]; _.ops.push(op); break; }
                    if (t[2]) _.ops.pop();
                    _.trys.pop(); continue;
            }
            op = body.call(thisArg, _);
        } catch (e) { op = [6, e]; y = 0; } finally { f = t = 0; }
        if (op[0] & 5) throw op[1]; return { value: op[0] ? op[1] : void 0, done: true };
    }
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.EMPTY_OPERATOR_CONFIG = exports.GLOBAL_MAXIMUM_OUTPUT_BYTES = void 0;
exports.composeCredentials = composeCredentials;
exports.composeSystem = composeSystem;
var node_crypto_1 = require("node:crypto");
var node_path_1 = require("node:path");
var blob_store_folder_1 = require("@veetbot/blob-store-folder");
var credential_broker_1 = require("@veetbot/credential-broker");
var mcp_adapter_1 = require("@veetbot/mcp-adapter");
var policy_1 = require("@veetbot/policy");
var registry_1 = require("@veetbot/registry");
var runtime_1 = require("@veetbot/runtime");
var store_postgres_1 = require("@veetbot/store-postgres");
var telemetry_1 = require("@veetbot/telemetry");
var tools_builtin_1 = require("@veetbot/tools-builtin");
var validation_1 = require("@veetbot/validation");
/** The global output ceiling (§ Output): a spec declaring more is a registration error. */
exports.GLOBAL_MAXIMUM_OUTPUT_BYTES = 1024 * 1024;
/** The operator configuration when a caller has none (tests): no servers, strict egress. */
exports.EMPTY_OPERATOR_CONFIG = __assign({ servers: [], egress: mcp_adapter_1.STRICT_EGRESS, tenantEgress: mcp_adapter_1.STRICT_EGRESS }, mcp_adapter_1.DEFAULT_OPERATOR_SETTINGS);
/**
 * The credential brokers: the ONE place they are constructed, for every role (RULINGS.md
 * "Credentials", ADR 0017). `builtins` is ToolExecutionContext.credentials for operator-shipped
 * builtins (env:/file:; none resolves today); `mcp` resolves per tenant and server origin — a
 * tenant's server only that tenant's `secret:NAME`, an operator's only env:/file:.
 */
function composeCredentials(stores, options) {
    return __awaiter(this, void 0, void 0, function () {
        var _a, broker, keys;
        var _b;
        return __generator(this, function (_c) {
            switch (_c.label) {
                case 0: return [4 /*yield*/, (0, credential_broker_1.openCredentialBroker)({ env: (_b = options.secretsEnv) !== null && _b !== void 0 ? _b : {}, dataDir: options.dataDir, secrets: stores.tenantSecrets })];
                case 1:
                    _a = _c.sent(), broker = _a.broker, keys = _a.keys;
                    return [2 /*return*/, { builtins: new credential_broker_1.DefaultCredentialBroker({}), mcp: broker, secretKeys: keys }];
            }
        });
    });
}
/**
 * The composition root of every process (`pnpm start`, `--api-only`, `--worker-only`,
 * `pnpm start:worker`) and of the tests that compose in process: the real validator, registries
 * (builtins plus each tenant's MCP tools), policy engine, stores, folder blob store and
 * workspaces, credential broker, MCP adapter (with metrics and the operator's settings), step
 * queue, runtime and worker loop over one database. Nothing here is a fake.
 */
function composeSystem(options) {
    return __awaiter(this, void 0, void 0, function () {
        var database, dataDir, clock, operator, stores, apiStores, validator, builtins, newRegistry, registry, tenantRegistries, registries, policy, blobs, artifacts, _a, credentials, mcpCredentials, secretKeys, workspaces, operatorEgress, tenantEgress, metrics, mcp, runtime, queue, worker, shutdown, closing;
        var _this = this;
        var _b, _c, _d, _e;
        return __generator(this, function (_f) {
            switch (_f.label) {
                case 0:
                    database = options.database, dataDir = options.dataDir;
                    clock = (_b = options.clock) !== null && _b !== void 0 ? _b : { now: function () { return new Date(); } };
                    operator = (_c = options.operator) !== null && _c !== void 0 ? _c : exports.EMPTY_OPERATOR_CONFIG;
                    stores = (0, store_postgres_1.createStores)(database);
                    apiStores = (0, store_postgres_1.createApiStores)(database);
                    validator = new validation_1.AjvSchemaValidator();
                    builtins = (0, tools_builtin_1.createBuiltinTools)({ outboxPath: (0, node_path_1.join)(dataDir, 'outbox.log'), clock: clock });
                    newRegistry = function () {
                        var fresh = new registry_1.ToolRegistryImpl({ validator: validator, globalMaximumOutputBytes: exports.GLOBAL_MAXIMUM_OUTPUT_BYTES, flags: {} });
                        fresh.registerBuiltins(builtins);
                        return fresh;
                    };
                    registry = newRegistry();
                    tenantRegistries = new Map();
                    registries = {
                        forTenant: function (tenantId) {
                            var found = tenantRegistries.get(tenantId);
                            if (found === undefined) {
                                found = newRegistry();
                                tenantRegistries.set(tenantId, found);
                            }
                            return found;
                        },
                    };
                    policy = new policy_1.DefaultPolicyEngine();
                    blobs = new blob_store_folder_1.FolderBlobStore({ root: (0, node_path_1.join)(dataDir, 'blobs') });
                    artifacts = (0, blob_store_folder_1.createArtifactWriterFactory)({ blobs: blobs, artifacts: stores.artifacts, clock: clock });
                    return [4 /*yield*/, composeCredentials(stores, __assign({ dataDir: dataDir }, (options.secretsEnv === undefined ? {} : { secretsEnv: options.secretsEnv })))];
                case 1:
                    _a = _f.sent(), credentials = _a.builtins, mcpCredentials = _a.mcp, secretKeys = _a.secretKeys;
                    workspaces = new blob_store_folder_1.FolderWorkspaceProvider({ root: (0, node_path_1.join)(dataDir, 'workspaces') });
                    operatorEgress = new mcp_adapter_1.DefaultEgressPolicy(operator.egress);
                    tenantEgress = (_d = options.egress) !== null && _d !== void 0 ? _d : new mcp_adapter_1.DefaultEgressPolicy(operator.tenantEgress);
                    metrics = new telemetry_1.PrometheusToolMetrics();
                    mcp = options.mcp === false
                        ? undefined
                        : new mcp_adapter_1.McpAdapter({
                            servers: (0, mcp_adapter_1.serverDirectory)({ operator: operator.servers, tenantRows: stores.mcpServers }),
                            catalog: stores.mcpCatalog,
                            events: stores.events,
                            skills: stores.skills,
                            credentials: mcpCredentials,
                            validator: validator,
                            egress: tenantEgress,
                            // By origin, which the directory sets from where the configuration was read (never a
                            // column a tenant writes): a tenant row with the same URL is still a tenant's.
                            egressFor: function (config) { return (config.origin === 'operator' ? operatorEgress : tenantEgress); },
                            clock: clock,
                            metrics: metrics,
                            settings: {
                                discoveryReuseSeconds: operator.discoveryReuseSeconds,
                                warmupConnectTimeoutSeconds: operator.warmupConnectTimeoutSeconds,
                                warmupRetrySeconds: operator.warmupRetrySeconds,
                                warmupAttempts: operator.warmupAttempts,
                            },
                        });
                    runtime = new runtime_1.Runtime(__assign(__assign(__assign({ registry: registry, registries: registries, validator: validator, policy: policy, clock: clock, stores: stores, artifacts: artifacts, credentials: credentials, owner: (_e = options.owner) !== null && _e !== void 0 ? _e : "veetbot-".concat((0, node_crypto_1.randomUUID)()), workspaces: workspaces }, (mcp === undefined ? {} : { mcp: mcp })), { metrics: metrics }), (options.runtimeSettings === undefined ? {} : { settings: options.runtimeSettings })));
                    return [4 /*yield*/, (0, store_postgres_1.createStepQueue)(database, options.onListenError === undefined ? {} : { onListenError: options.onListenError })];
                case 2:
                    queue = _f.sent();
                    worker = new runtime_1.WorkerLoop(__assign(__assign({ runtime: runtime, stores: stores, queue: queue, clock: clock }, (options.workerSettings === undefined ? {} : { settings: options.workerSettings })), (options.onWorkerEvent === undefined ? {} : { onEvent: options.onWorkerEvent })));
                    shutdown = new AbortController();
                    closing = null;
                    return [2 /*return*/, {
                            stores: stores,
                            apiStores: apiStores,
                            runtime: runtime,
                            queue: queue,
                            blobs: blobs,
                            clock: clock,
                            registry: registry,
                            registries: registries,
                            metrics: metrics,
                            secretKeys: secretKeys,
                            mcp: mcp,
                            operator: operator,
                            tenantEgress: tenantEgress,
                            environment: { flags: {}, targetKinds: mcp === undefined ? ['in_process'] : ['in_process', 'mcp'] },
                            readiness: function () { return (0, store_postgres_1.checkReadiness)(database); },
                            worker: worker,
                            shutdownSignal: shutdown.signal,
                            close: function (closeOptions) {
                                if (closeOptions === void 0) { closeOptions = {}; }
                                closing !== null && closing !== void 0 ? closing : (closing = (function () { return __awaiter(_this, void 0, void 0, function () {
                                    var report;
                                    var _a;
                                    return __generator(this, function (_b) {
                                        switch (_b.label) {
                                            case 0:
                                                shutdown.abort();
                                                return [4 /*yield*/, worker.stop({ drainMs: (_a = closeOptions.drainMs) !== null && _a !== void 0 ? _a : 10000 })];
                                            case 1:
                                                report = _b.sent();
                                                return [4 /*yield*/, (mcp === null || mcp === void 0 ? void 0 : mcp.shutdown().catch(function () { return undefined; }))];
                                            case 2:
                                                _b.sent();
                                                return [4 /*yield*/, queue.close()];
                                            case 3:
                                                _b.sent();
                                                return [2 /*return*/, { drained: report.drained, abandoned: report.abandoned }];
                                        }
                                    });
                                }); })());
                                return closing;
                            },
                        }];
            }
        });
    });
}
