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
Object.defineProperty(exports, "__esModule", { value: true });
exports.DEFAULT_STARTUP_TIMEOUT_MS = exports.DEFAULT_DRAIN_MS = exports.DEFAULT_WORKER_PORT = exports.DEFAULT_PORT = void 0;
exports.readSettings = readSettings;
var node_path_1 = require("node:path");
var api_keys_1 = require("./api-keys");
var startup_error_1 = require("./startup-error");
exports.DEFAULT_PORT = 8787;
exports.DEFAULT_WORKER_PORT = 8788;
exports.DEFAULT_DRAIN_MS = 20000;
exports.DEFAULT_STARTUP_TIMEOUT_MS = 15000;
var ROLE_FLAGS = { '--api-only': 'api', '--worker-only': 'worker' };
/**
 * Environment and flags, each checked; a bad value is `startup.config_invalid` naming it.
 * `defaultRole` is the role without a flag (`both` for `pnpm start`, `worker` for the worker's
 * own entry point).
 */
function readSettings(env, argv, cwd, defaultRole) {
    var _a, _b, _c, _d;
    if (defaultRole === void 0) { defaultRole = 'both'; }
    var role = null;
    for (var _i = 0, argv_1 = argv; _i < argv_1.length; _i++) {
        var arg = argv_1[_i];
        var named = ROLE_FLAGS[arg];
        if (named === undefined)
            throw new startup_error_1.StartupError('startup.config_invalid', "unknown argument ".concat(JSON.stringify(arg), " (known: --api-only, --worker-only)"));
        if (role !== null && role !== named)
            throw new startup_error_1.StartupError('startup.config_invalid', '--api-only and --worker-only exclude each other (neither runs both)');
        role = named;
    }
    role !== null && role !== void 0 ? role : (role = defaultRole);
    var nonEmpty = function (name) {
        var _a;
        var value = (_a = env[name]) === null || _a === void 0 ? void 0 : _a.trim();
        return value === undefined || value === '' ? null : value;
    };
    var port = portOf(nonEmpty('VEETBOT_PORT'), 'VEETBOT_PORT', exports.DEFAULT_PORT, 1);
    var workerPort = portOf(nonEmpty('VEETBOT_WORKER_PORT'), 'VEETBOT_WORKER_PORT', exports.DEFAULT_WORKER_PORT, 0);
    var demoApiKey = nonEmpty('VEETBOT_DEMO_API_KEY');
    if (demoApiKey !== null && !api_keys_1.API_KEY_PATTERN.test(demoApiKey)) {
        throw new startup_error_1.StartupError('startup.config_invalid', 'VEETBOT_DEMO_API_KEY must look like vbk_ followed by 16 to 128 of A-Z a-z 0-9 _ -');
    }
    var databaseUrl = nonEmpty('DATABASE_URL');
    if (databaseUrl === null && role === 'worker') {
        throw new startup_error_1.StartupError('startup.database_url_required', 'DATABASE_URL is not set. A separate worker needs PostgreSQL: the embedded PGlite database belongs to one process (run `pnpm start` for api and worker together).');
    }
    if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
        throw new startup_error_1.StartupError('startup.config_invalid', 'DATABASE_URL must be a postgres:// URL');
    }
    var dataDir = (0, node_path_1.resolve)(cwd, (_a = nonEmpty('VEETBOT_DATA_DIR')) !== null && _a !== void 0 ? _a : '.veetbot');
    var configured = nonEmpty('VEETBOT_OPERATOR_CONFIG');
    var legacy = nonEmpty('VEETBOT_CONFIG');
    if (configured !== null && legacy !== null && (0, node_path_1.resolve)(cwd, configured) !== (0, node_path_1.resolve)(cwd, legacy)) {
        throw new startup_error_1.StartupError('startup.config_invalid', 'VEETBOT_OPERATOR_CONFIG and VEETBOT_CONFIG (its old name) name different files; set only VEETBOT_OPERATOR_CONFIG');
    }
    var concurrency = integer(env, 'VEETBOT_WORKER_CONCURRENCY');
    var pollIntervalMs = integer(env, 'VEETBOT_WORKER_POLL_MS');
    var sweepIntervalMs = integer(env, 'VEETBOT_WORKER_SWEEP_MS');
    return {
        role: role,
        databaseUrl: databaseUrl,
        dataDir: dataDir,
        port: port,
        workerPort: workerPort,
        host: '127.0.0.1',
        demoApiKey: demoApiKey,
        operatorConfigPath: (0, node_path_1.resolve)(cwd, (_b = configured !== null && configured !== void 0 ? configured : legacy) !== null && _b !== void 0 ? _b : (0, node_path_1.resolve)(dataDir, 'operator.json')),
        drainMs: (_c = integer(env, 'VEETBOT_WORKER_DRAIN_MS', 0)) !== null && _c !== void 0 ? _c : exports.DEFAULT_DRAIN_MS,
        loop: __assign(__assign(__assign({}, (concurrency === undefined ? {} : { concurrency: concurrency })), (pollIntervalMs === undefined ? {} : { pollIntervalMs: pollIntervalMs })), (sweepIntervalMs === undefined ? {} : { sweepIntervalMs: sweepIntervalMs })),
        leaseTtlMs: integer(env, 'VEETBOT_LEASE_TTL_MS'),
        poolSize: integer(env, 'VEETBOT_DATABASE_POOL_SIZE'),
        startupTimeoutMs: (_d = integer(env, 'VEETBOT_STARTUP_TIMEOUT_MS')) !== null && _d !== void 0 ? _d : exports.DEFAULT_STARTUP_TIMEOUT_MS,
        secretsEnv: {
            VEETBOT_SECRETS_KEY: env['VEETBOT_SECRETS_KEY'],
            VEETBOT_SECRETS_KEY_FILE: env['VEETBOT_SECRETS_KEY_FILE'],
            VEETBOT_SECRETS_PREVIOUS_KEYS: env['VEETBOT_SECRETS_PREVIOUS_KEYS'],
        },
    };
}
function portOf(text, name, fallback, minimum) {
    if (text === null)
        return fallback;
    if (!/^\d{1,5}$/.test(text) || Number(text) < minimum || Number(text) > 65535) {
        throw new startup_error_1.StartupError('startup.config_invalid', "".concat(name, " must be a port number from ").concat(minimum, " to 65535"));
    }
    return Number(text);
}
/** An optional integer variable: absent is undefined; anything but an integer >= minimum is refused. */
function integer(env, name, minimum) {
    var _a;
    if (minimum === void 0) { minimum = 1; }
    var raw = (_a = env[name]) === null || _a === void 0 ? void 0 : _a.trim();
    if (raw === undefined || raw === '')
        return undefined;
    var value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < minimum) {
        throw new startup_error_1.StartupError('startup.config_invalid', "".concat(name, " must be an integer of at least ").concat(minimum, " (got \"").concat(raw, "\")."));
    }
    return value;
}
