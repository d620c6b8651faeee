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
var promises_1 = require("node:fs/promises");
var node_os_1 = require("node:os");
var node_path_1 = require("node:path");
var vitest_1 = require("vitest");
var database_1 = require("../src/database");
var operator_config_1 = require("../src/operator-config");
var settings_1 = require("../src/settings");
var startup_error_1 = require("../src/startup-error");
var dir;
(0, vitest_1.beforeAll)(function () { return __awaiter(void 0, void 0, void 0, function () {
    return __generator(this, function (_a) {
        switch (_a.label) {
            case 0: return [4 /*yield*/, (0, promises_1.mkdtemp)((0, node_path_1.join)((0, node_os_1.tmpdir)(), 'veetbot-embedded-'))];
            case 1:
                dir = _a.sent();
                return [2 /*return*/];
        }
    });
}); });
(0, vitest_1.afterAll)(function () { return __awaiter(void 0, void 0, void 0, function () {
    return __generator(this, function (_a) {
        switch (_a.label) {
            case 0: return [4 /*yield*/, (0, promises_1.rm)(dir, { recursive: true, force: true })];
            case 1:
                _a.sent();
                return [2 /*return*/];
        }
    });
}); });
var codeOf = function (fn) {
    try {
        fn();
    }
    catch (error) {
        return error instanceof startup_error_1.StartupError ? "".concat(error.code, ": ").concat(error.message) : "other: ".concat(String(error));
    }
    return 'no error';
};
(0, vitest_1.describe)('settings: one reading for every role (ADR 0022)', function () {
    (0, vitest_1.it)('defaults: PGlite in ./.veetbot, port 8787 and the worker port 8788 on 127.0.0.1, operator.json in the data folder, both roles', function () {
        (0, vitest_1.expect)((0, settings_1.readSettings)({}, [], '/srv/app')).toEqual({
            role: 'both',
            databaseUrl: null,
            dataDir: '/srv/app/.veetbot',
            port: 8787,
            workerPort: 8788,
            host: '127.0.0.1',
            demoApiKey: null,
            operatorConfigPath: '/srv/app/.veetbot/operator.json',
            drainMs: settings_1.DEFAULT_DRAIN_MS,
            loop: {},
            leaseTtlMs: undefined,
            poolSize: undefined,
            startupTimeoutMs: settings_1.DEFAULT_STARTUP_TIMEOUT_MS,
        });
        var set = (0, settings_1.readSettings)({ DATABASE_URL: 'postgres://u@h/db', VEETBOT_DATA_DIR: 'data', VEETBOT_PORT: '9000', VEETBOT_DEMO_API_KEY: 'vbk_abcdefghijklmnopqrstuv' }, ['--api-only'], '/srv/app');
        (0, vitest_1.expect)(set).toMatchObject({ role: 'api', databaseUrl: 'postgres://u@h/db', dataDir: '/srv/app/data', port: 9000, demoApiKey: 'vbk_abcdefghijklmnopqrstuv' });
    });
    (0, vitest_1.it)('the api and the worker read the same operator file from the same variables and the same default', function () {
        var env = { DATABASE_URL: 'postgres://db/v', VEETBOT_DATA_DIR: 'data' };
        var api = (0, settings_1.readSettings)(env, ['--api-only'], '/srv');
        var worker = (0, settings_1.readSettings)(env, [], '/srv', 'worker');
        (0, vitest_1.expect)(worker.role).toBe('worker');
        (0, vitest_1.expect)(worker.operatorConfigPath).toBe(api.operatorConfigPath);
        (0, vitest_1.expect)(worker.operatorConfigPath).toBe('/srv/data/operator.json');
        (0, vitest_1.expect)((0, settings_1.readSettings)(env, ['--worker-only'], '/srv').role).toBe('worker');
        // VEETBOT_CONFIG (the worker's old name) still works, and means the same file everywhere.
        (0, vitest_1.expect)((0, settings_1.readSettings)(__assign(__assign({}, env), { VEETBOT_CONFIG: 'ops/v.json' }), [], '/srv', 'worker').operatorConfigPath).toBe('/srv/ops/v.json');
        (0, vitest_1.expect)((0, settings_1.readSettings)(__assign(__assign({}, env), { VEETBOT_CONFIG: 'ops/v.json' }), ['--api-only'], '/srv').operatorConfigPath).toBe('/srv/ops/v.json');
    });
    (0, vitest_1.it)('reads every worker variable in every role', function () {
        var settings = (0, settings_1.readSettings)({
            DATABASE_URL: 'postgresql://db/v',
            VEETBOT_DATA_DIR: 'data',
            VEETBOT_OPERATOR_CONFIG: 'ops/veetbot.json',
            VEETBOT_WORKER_PORT: '0',
            VEETBOT_WORKER_CONCURRENCY: '8',
            VEETBOT_WORKER_POLL_MS: '250',
            VEETBOT_WORKER_SWEEP_MS: '2000',
            VEETBOT_WORKER_DRAIN_MS: '0',
            VEETBOT_LEASE_TTL_MS: '9000',
            VEETBOT_DATABASE_POOL_SIZE: '4',
            VEETBOT_STARTUP_TIMEOUT_MS: '500',
        }, [], '/srv');
        (0, vitest_1.expect)(settings).toMatchObject({
            role: 'both',
            dataDir: '/srv/data',
            operatorConfigPath: '/srv/ops/veetbot.json',
            workerPort: 0,
            drainMs: 0,
            loop: { concurrency: 8, pollIntervalMs: 250, sweepIntervalMs: 2000 },
            leaseTtlMs: 9000,
            poolSize: 4,
            startupTimeoutMs: 500,
        });
    });
    (0, vitest_1.it)('refuses each bad value with startup.config_invalid naming it', function () {
        (0, vitest_1.expect)(codeOf(function () { return (0, settings_1.readSettings)({ VEETBOT_PORT: '99999' }, [], '/'); })).toMatch(/^startup\.config_invalid: VEETBOT_PORT/);
        (0, vitest_1.expect)(codeOf(function () { return (0, settings_1.readSettings)({ VEETBOT_PORT: 'eighty' }, [], '/'); })).toMatch(/^startup\.config_invalid: VEETBOT_PORT/);
        (0, vitest_1.expect)(codeOf(function () { return (0, settings_1.readSettings)({ VEETBOT_WORKER_PORT: '70000' }, [], '/'); })).toMatch(/^startup\.config_invalid: VEETBOT_WORKER_PORT/);
        (0, vitest_1.expect)(codeOf(function () { return (0, settings_1.readSettings)({ VEETBOT_DEMO_API_KEY: 'secret' }, [], '/'); })).toMatch(/^startup\.config_invalid: VEETBOT_DEMO_API_KEY/);
        (0, vitest_1.expect)(codeOf(function () { return (0, settings_1.readSettings)({ DATABASE_URL: 'mysql://x' }, [], '/'); })).toMatch(/^startup\.config_invalid: DATABASE_URL/);
        (0, vitest_1.expect)(codeOf(function () { return (0, settings_1.readSettings)({}, ['--all'], '/'); })).toMatch(/^startup\.config_invalid: unknown argument "--all"/);
        (0, vitest_1.expect)(codeOf(function () { return (0, settings_1.readSettings)({}, ['--api-only', '--worker-only'], '/'); })).toMatch(/^startup\.config_invalid: --api-only and --worker-only/);
        (0, vitest_1.expect)(codeOf(function () { return (0, settings_1.readSettings)({ VEETBOT_OPERATOR_CONFIG: 'a.json', VEETBOT_CONFIG: 'b.json' }, [], '/'); })).toMatch(/^startup\.config_invalid: VEETBOT_OPERATOR_CONFIG and VEETBOT_CONFIG/);
        var _loop_1 = function (name_1, value) {
            (0, vitest_1.expect)(codeOf(function () {
                var _a;
                return (0, settings_1.readSettings)((_a = { DATABASE_URL: 'postgres://db/v' }, _a[name_1] = value, _a), [], '/');
            })).toMatch(new RegExp("^startup\\.config_invalid: ".concat(name_1)));
        };
        for (var _i = 0, _a = [
            ['VEETBOT_WORKER_CONCURRENCY', '0'],
            ['VEETBOT_WORKER_POLL_MS', '1.5'],
            ['VEETBOT_WORKER_SWEEP_MS', '-1'],
            ['VEETBOT_WORKER_DRAIN_MS', 'soon'],
        ]; _i < _a.length; _i++) {
            var _b = _a[_i], name_1 = _b[0], value = _b[1];
            _loop_1(name_1, value);
        }
    });
    (0, vitest_1.it)('a worker without DATABASE_URL is startup.database_url_required (PGlite belongs to one process)', function () {
        (0, vitest_1.expect)(codeOf(function () { return (0, settings_1.readSettings)({}, [], '/', 'worker'); })).toMatch(/^startup\.database_url_required: DATABASE_URL is not set\./);
        (0, vitest_1.expect)(codeOf(function () { return (0, settings_1.readSettings)({ DATABASE_URL: '  ' }, ['--worker-only'], '/'); })).toMatch(/^startup\.database_url_required/);
    });
    (0, vitest_1.it)('redacts the password of a URL for messages', function () {
        (0, vitest_1.expect)((0, database_1.redactUrl)('postgres://u:secret@db:5432/v')).toBe('postgres://u:***@db:5432/v');
        (0, vitest_1.expect)((0, database_1.redactUrl)('postgres://db/v')).toBe('postgres://db/v');
        (0, vitest_1.expect)((0, database_1.redactUrl)('not a url')).toBe('(an unparsable DATABASE_URL)');
    });
    (0, vitest_1.it)('prints one line per start-up failure', function () {
        (0, vitest_1.expect)((0, startup_error_1.startupErrorLine)(new startup_error_1.StartupError('startup.port_in_use', '127.0.0.1:1 is already in use'))).toBe('error startup.port_in_use: 127.0.0.1:1 is already in use');
        (0, vitest_1.expect)((0, startup_error_1.startupErrorLine)(new Error('two\nlines'))).toBe('error startup.failed: two');
    });
});
(0, vitest_1.describe)('the operator configuration', function () {
    (0, vitest_1.it)('resolves server-everything from this package and writes the example once, never over an existing file', function () { return __awaiter(void 0, void 0, void 0, function () {
        var entry, path, first, _a, _b, _c, second;
        return __generator(this, function (_d) {
            switch (_d.label) {
                case 0:
                    entry = (0, operator_config_1.serverEverythingEntry)();
                    (0, vitest_1.expect)(entry).toMatch(/server-everything\/dist\/index\.js$/);
                    path = (0, node_path_1.join)(dir, 'operator.json');
                    first = (0, operator_config_1.prepareOperatorConfig)(path);
                    (0, vitest_1.expect)(first.written).toBe(true);
                    (0, vitest_1.expect)(first.config.servers).toEqual([vitest_1.expect.objectContaining({ serverId: 'everything', transport: 'stdio', endpoint: process.execPath, args: [entry, 'stdio'], authScheme: 'none' })]);
                    _a = vitest_1.expect;
                    _c = (_b = JSON).parse;
                    return [4 /*yield*/, (0, promises_1.readFile)(path, 'utf8')];
                case 1:
                    _a.apply(void 0, [_c.apply(_b, [_d.sent()])]).toEqual((0, operator_config_1.exampleOperatorConfig)(process.execPath, entry));
                    return [4 /*yield*/, (0, promises_1.writeFile)(path, JSON.stringify({ mcp: { servers: [] } }))];
                case 2:
                    _d.sent();
                    second = (0, operator_config_1.prepareOperatorConfig)(path);
                    (0, vitest_1.expect)(second.written).toBe(false);
                    (0, vitest_1.expect)(second.config.servers).toEqual([]);
                    return [2 /*return*/];
            }
        });
    }); });
    (0, vitest_1.it)('a bad file is startup.config_invalid with the path of the bad field', function () { return __awaiter(void 0, void 0, void 0, function () {
        var path;
        return __generator(this, function (_a) {
            switch (_a.label) {
                case 0:
                    path = (0, node_path_1.join)(dir, 'bad.json');
                    return [4 /*yield*/, (0, promises_1.writeFile)(path, JSON.stringify({ mcp: { servers: [{ server_id: 'ok', transport: 'stdio', endpoint: 'node x.js', auth_scheme: 'bearer' }] } }))];
                case 1:
                    _a.sent();
                    (0, vitest_1.expect)(codeOf(function () { return (0, operator_config_1.prepareOperatorConfig)(path); })).toMatch(/^startup\.config_invalid: .*bad\.json at mcp\.servers\[0\]\.\S+: mcp\.config\./);
                    return [4 /*yield*/, (0, promises_1.writeFile)(path, '{ not json')];
                case 2:
                    _a.sent();
                    (0, vitest_1.expect)(codeOf(function () { return (0, operator_config_1.prepareOperatorConfig)(path); })).toMatch(/^startup\.config_invalid: .*bad\.json at \(root\): mcp\.config\.file_not_json/);
                    return [2 /*return*/];
            }
        });
    }); });
});
