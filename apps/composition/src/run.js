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
exports.runVeetbot = runVeetbot;
var node_fs_1 = require("node:fs");
var node_http_1 = require("node:http");
var node_os_1 = require("node:os");
var node_crypto_1 = require("node:crypto");
var domain_1 = require("@veetbot/domain");
var compose_1 = require("./compose");
var database_1 = require("./database");
var demo_tenant_1 = require("./demo-tenant");
var operations_1 = require("./operations");
var operator_config_1 = require("./operator-config");
var settings_1 = require("./settings");
var startup_error_1 = require("./startup-error");
var worker_log_1 = require("./worker-log");
var ROLE_LABEL = { both: 'api and worker', api: 'api only (--api-only)', worker: 'worker only' };
/**
 * One process of the deployment, in any role (ADR 0022): `pnpm start` (both), `pnpm start:api`
 * (`--api-only`), `pnpm start:worker` (the worker). The same settings mean the same thing in
 * every role; every step of start-up is printed as it begins (a first start on PGlite takes
 * seconds); a failure is one line `error <code>: <message>` and exit 1. SIGTERM/SIGINT: stop
 * accepting, drain in-flight batches (VEETBOT_WORKER_DRAIN_MS), exit 0; a second signal exits 1.
 */
function runVeetbot(options) {
    return __awaiter(this, void 0, void 0, function () {
        var sink, error_1;
        var _a;
        return __generator(this, function (_b) {
            switch (_b.label) {
                case 0:
                    sink = (_a = options.sink) !== null && _a !== void 0 ? _a : worker_log_1.consoleSink;
                    _b.label = 1;
                case 1:
                    _b.trys.push([1, 3, , 4]);
                    return [4 /*yield*/, start(options, sink)];
                case 2:
                    _b.sent();
                    return [3 /*break*/, 4];
                case 3:
                    error_1 = _b.sent();
                    sink.error((0, startup_error_1.startupErrorLine)(error_1));
                    process.exit(1);
                    return [3 /*break*/, 4];
                case 4: return [2 /*return*/];
            }
        });
    });
}
function start(options, sink) {
    return __awaiter(this, void 0, void 0, function () {
        var settings, runsApi, runsWorker, owner, state, operator, serverIds, handler, _a, _b, workerPort, server, database, system, demo, s, began_1;
        var _c;
        return __generator(this, function (_d) {
            switch (_d.label) {
                case 0:
                    settings = (0, settings_1.readSettings)(options.env, options.argv, options.cwd, options.defaultRole);
                    runsApi = settings.role !== 'worker';
                    runsWorker = settings.role !== 'api';
                    if (runsApi && options.api === undefined)
                        throw new startup_error_1.StartupError('startup.config_invalid', 'this entry point runs the worker only (use `pnpm start` or `pnpm start:api` for the api)');
                    owner = "".concat(runsApi ? 'veetbot' : 'worker', "-").concat((0, node_os_1.hostname)(), "-").concat(process.pid, "-").concat((0, node_crypto_1.randomBytes)(4).toString('hex'));
                    state = { system: null, database: null, stopping: false, servers: [] };
                    installSignals(settings, state, sink);
                    sink.info("veetbot starting: ".concat(ROLE_LABEL[settings.role]));
                    try {
                        (0, node_fs_1.mkdirSync)(settings.dataDir, { recursive: true, mode: 448 });
                    }
                    catch (cause) {
                        throw new startup_error_1.StartupError('startup.config_invalid', "VEETBOT_DATA_DIR ".concat(settings.dataDir, " cannot be created (").concat((_c = cause.code) !== null && _c !== void 0 ? _c : 'error', ")"), { cause: cause });
                    }
                    operator = (0, operator_config_1.prepareOperatorConfig)(settings.operatorConfigPath);
                    serverIds = operator.config.servers.map(function (s) { return s.serverId; });
                    sink.info("  operator configuration: ".concat(settings.operatorConfigPath).concat(operator.written ? ' (example written)' : '', "; MCP servers: ").concat(serverIds.length === 0 ? 'none' : serverIds.join(', ')));
                    handler = null;
                    if (!runsApi) return [3 /*break*/, 2];
                    _b = (_a = state.servers).push;
                    return [4 /*yield*/, listen(settings, settings.port, 'VEETBOT_PORT', function (req, res) {
                            if (handler !== null)
                                return handler(req, res);
                            res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
                            res.end(JSON.stringify({ error: { code: 'service.starting', message: 'The service is starting.' } }));
                        })];
                case 1:
                    _b.apply(_a, [_d.sent()]);
                    _d.label = 2;
                case 2:
                    workerPort = null;
                    if (!(settings.role === 'worker')) return [3 /*break*/, 4];
                    return [4 /*yield*/, listen(settings, settings.workerPort, 'VEETBOT_WORKER_PORT', (0, operations_1.operationsListener)(function () { return state.system; }))];
                case 3:
                    server = _d.sent();
                    state.servers.push(server);
                    workerPort = server.address().port;
                    _d.label = 4;
                case 4:
                    sink.info("  database: ".concat((0, database_1.databaseLabel)(settings), ": opening and applying migrations\u2026"));
                    return [4 /*yield*/, (0, database_1.openAndMigrate)(settings)];
                case 5:
                    database = _d.sent();
                    state.database = database;
                    sink.info('  database: ready (every migration applied)');
                    return [4 /*yield*/, composeSecrets(function () { return (0, compose_1.composeSystem)(__assign(__assign({ database: database, dataDir: settings.dataDir, secretsEnv: settings.secretsEnv, operator: operator.config, owner: owner, workerSettings: settings.loop }, (settings.leaseTtlMs === undefined ? {} : { runtimeSettings: { leaseTtlMs: settings.leaseTtlMs } })), { onWorkerEvent: function (event) { return (0, worker_log_1.logEvent)(sink, event); }, onListenError: function (error) { return sink.error("listen connection lost code=".concat(domain_1.VeetbotError.isInstance(error) ? error.code : 'unknown', " (reconnecting; polling meanwhile)")); } })); })];
                case 6:
                    system = _d.sent();
                    state.system = system;
                    sink.info("  tenant secrets key: ".concat(secretKeySource(system)));
                    demo = null;
                    if (!runsApi) return [3 /*break*/, 8];
                    sink.info("  tenant: ensuring the demo tenant \"".concat(demo_tenant_1.DEMO_TENANT_ID, "\"\u2026"));
                    return [4 /*yield*/, (0, demo_tenant_1.ensureDemoTenant)(system.stores, settings.demoApiKey, new Date())];
                case 7:
                    demo = _d.sent();
                    handler = options.api(system, function (error, where) { return sink.error("error internal: ".concat(where.method, " ").concat(where.path, ": ").concat(error instanceof Error ? error.message.split('\n')[0] : String(error))); });
                    _d.label = 8;
                case 8:
                    if (state.stopping)
                        return [2 /*return*/];
                    if (runsWorker)
                        system.worker.start();
                    if (runsApi)
                        printApiStarted(settings, sink, demo);
                    if (runsWorker) {
                        s = system.worker.settings;
                        sink.info("worker ".concat(owner, " started: concurrency=").concat(s.concurrency, " poll_ms=").concat(s.pollIntervalMs, " sweep_ms=").concat(s.sweepIntervalMs, " data_dir=").concat(settings.dataDir));
                    }
                    if (workerPort !== null)
                        sink.info("  worker operations: http://".concat(settings.host, ":").concat(workerPort, "/metrics, /healthz, /readyz"));
                    // § Discovery happens at session open; warming the operator's servers now means the first
                    // session does not wait for a stdio server to start (ADR-0131's warm-up records nothing).
                    if (runsApi && system.mcp !== undefined && serverIds.length > 0) {
                        sink.info("  MCP discovery: warming up ".concat(serverIds.join(', '), "\u2026"));
                        began_1 = Date.now();
                        void system.mcp.warmUp(demo_tenant_1.DEMO_TENANT_ID).then(function () { return sink.info("  MCP discovery: warm-up finished in ".concat(((Date.now() - began_1) / 1000).toFixed(1), " s")); }, function () { return sink.info('  MCP discovery: warm-up did not finish; servers are discovered at session open'); });
                    }
                    return [2 /*return*/];
            }
        });
    });
}
function listen(settings, port, variable, listener) {
    var server = (0, node_http_1.createServer)(listener);
    return new Promise(function (resolve, reject) {
        var onError = function (error) {
            var _a;
            server.off('listening', onListening);
            if (error.code === 'EADDRINUSE')
                reject(new startup_error_1.StartupError('startup.port_in_use', "".concat(settings.host, ":").concat(port, " is already in use (set ").concat(variable, " to another port)")));
            else
                reject(new startup_error_1.StartupError('startup.failed', "cannot listen on ".concat(settings.host, ":").concat(port, " (").concat((_a = error.code) !== null && _a !== void 0 ? _a : error.message, ")")));
        };
        var onListening = function () {
            server.off('error', onError);
            resolve(server);
        };
        server.once('error', onError);
        server.once('listening', onListening);
        server.listen(port, settings.host);
    });
}
function printApiStarted(settings, sink, demo) {
    var base = "http://".concat(settings.host, ":").concat(settings.port);
    var lines = [
        "veetbot listening on ".concat(base),
        "  database: ".concat(settings.databaseUrl === null ? (0, database_1.databaseLabel)(settings) : 'PostgreSQL (DATABASE_URL)'),
        "  worker:   ".concat(settings.role === 'api' ? 'not in this process (--api-only): run `pnpm start:worker` beside it' : 'in this process'),
    ];
    if (settings.role === 'api' && settings.databaseUrl === null) {
        lines.push('  note: PGlite is one process; with --api-only no worker can run the steps. Use DATABASE_URL to run api and worker apart.');
    }
    var key = null;
    if (demo.kind === 'created') {
        key = demo.key;
        lines.push("Demo tenant \"".concat(demo_tenant_1.DEMO_TENANT_ID, "\" created. Its API key (printed this once; stored only as a sha256):"), "  ".concat(demo.key));
    }
    else if (demo.kind === 'fixed') {
        key = demo.key;
        lines.push("Demo tenant \"".concat(demo_tenant_1.DEMO_TENANT_ID, "\" uses the API key from VEETBOT_DEMO_API_KEY."));
    }
    else {
        lines.push("Demo tenant \"".concat(demo_tenant_1.DEMO_TENANT_ID, "\" exists; its API keys were printed when they were made (`pnpm veetbot key create --tenant ").concat(demo_tenant_1.DEMO_TENANT_ID, " \u2026` makes another)."));
    }
    var shown = key !== null && key !== void 0 ? key : '<your demo API key>';
    lines.push('Next step: open a session and see the pinned tools:', "  curl -s -X POST ".concat(base, "/v1/sessions -H 'Authorization: Bearer ").concat(shown, "' -H 'Content-Type: application/json' -d '{\"agent_id\":\"demo\"}'"), "More keys (an agent's without approvals.decide, an approver's with it): pnpm veetbot key create --tenant ".concat(demo_tenant_1.DEMO_TENANT_ID, " --scopes \u2026"), "The API's document: ".concat(base, "/v1/openapi.json"));
    sink.info(lines.join('\n'));
}
function installSignals(settings, state, sink) {
    var _this = this;
    var onSignal = function (signal) {
        var _a, _b, _c, _d;
        if (state.stopping) {
            sink.error("".concat(signal, " again: exiting without waiting for ").concat((_b = (_a = state.system) === null || _a === void 0 ? void 0 : _a.worker.inFlight) !== null && _b !== void 0 ? _b : 0, " batch(es)"));
            process.exit(1);
        }
        state.stopping = true;
        var system = state.system;
        sink.info("veetbot stopping (".concat(signal, "): draining ").concat((_c = system === null || system === void 0 ? void 0 : system.worker.inFlight) !== null && _c !== void 0 ? _c : 0, " batch(es) for up to ").concat(settings.drainMs, " ms"));
        for (var _i = 0, _e = state.servers; _i < _e.length; _i++) {
            var server = _e[_i];
            server.close();
            (_d = server.closeAllConnections) === null || _d === void 0 ? void 0 : _d.call(server);
        }
        void (function () { return __awaiter(_this, void 0, void 0, function () {
            var report;
            var _a;
            return __generator(this, function (_b) {
                switch (_b.label) {
                    case 0:
                        if (!(system !== null)) return [3 /*break*/, 2];
                        return [4 /*yield*/, system.close({ drainMs: settings.drainMs })];
                    case 1:
                        report = _b.sent();
                        if (report.drained)
                            sink.info('drained; leases released; exiting');
                        else
                            sink.error("drain timed out: ".concat(report.abandoned, " batch(es) abandoned; their leases expire and the sweep recovers them"));
                        _b.label = 2;
                    case 2: return [4 /*yield*/, ((_a = state.database) === null || _a === void 0 ? void 0 : _a.close())];
                    case 3:
                        _b.sent();
                        process.exit(0);
                        return [2 /*return*/];
                }
            });
        }); })().catch(function (error) {
            sink.error("shutdown failed code=".concat(domain_1.VeetbotError.isInstance(error) ? error.code : 'unknown'));
            process.exit(1);
        });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
}
/** A secrets key that cannot be read or decoded is a start-up error naming the variable (never the key). */
function composeSecrets(compose) {
    return __awaiter(this, void 0, void 0, function () {
        var cause_1;
        return __generator(this, function (_a) {
            switch (_a.label) {
                case 0:
                    _a.trys.push([0, 2, , 3]);
                    return [4 /*yield*/, compose()];
                case 1: return [2 /*return*/, _a.sent()];
                case 2:
                    cause_1 = _a.sent();
                    if (domain_1.VeetbotError.isInstance(cause_1) && cause_1.code.startsWith('credential.key_'))
                        throw new startup_error_1.StartupError('startup.config_invalid', cause_1.message, { cause: cause_1 });
                    throw cause_1;
                case 3: return [2 /*return*/];
            }
        });
    });
}
function secretKeySource(system) {
    var _a = system.secretKeys, source = _a.source, path = _a.path, keyring = _a.keyring;
    var where = source === 'generated' ? "generated into ".concat(path, " (mode 0600; back it up)") : source === 'data folder' ? path !== null && path !== void 0 ? path : '' : source;
    return "".concat(where, ", key id ").concat(keyring.current.id);
}
