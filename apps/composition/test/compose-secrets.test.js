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
var node_crypto_1 = require("node:crypto");
var promises_1 = require("node:fs/promises");
var node_os_1 = require("node:os");
var node_path_1 = require("node:path");
var credential_broker_1 = require("@veetbot/credential-broker");
var store_postgres_1 = require("@veetbot/store-postgres");
var vitest_1 = require("vitest");
var compose_1 = require("../src/compose");
var database_1 = require("../src/database");
var settings_1 = require("../src/settings");
/*
 * ADR 0017 in the one composition (ADR 0022) every role runs: a worker resolves a tenant's secret:NAME with the
 * key the api sealed it with (the shared data folder's secrets.key), refuses env:/file: on a
 * tenant row before dialling, and cannot open a secret sealed under a key it does not hold.
 * The credential is established before the transport is built, so "tool.auth_failed" means the
 * broker refused; any other failure here (the egress policy refusing 127.0.0.1) means the
 * credential resolved.
 */
var serverUrl = process.env['DATABASE_URL'];
(0, vitest_1.describe)('settings: the tenant-secrets key', function () {
    (0, vitest_1.it)('reads VEETBOT_SECRETS_KEY, _KEY_FILE and _PREVIOUS_KEYS and nothing else of the environment for the key', function () {
        var config = (0, settings_1.readSettings)({ DATABASE_URL: 'postgres://db/x', VEETBOT_SECRETS_KEY: 'k', VEETBOT_SECRETS_KEY_FILE: '/f', VEETBOT_SECRETS_PREVIOUS_KEYS: 'p', OTHER: 'o' }, [], '/srv', 'worker');
        (0, vitest_1.expect)(config.secretsEnv).toEqual({ VEETBOT_SECRETS_KEY: 'k', VEETBOT_SECRETS_KEY_FILE: '/f', VEETBOT_SECRETS_PREVIOUS_KEYS: 'p' });
    });
});
if (serverUrl) {
    (0, vitest_1.describe)('composition: tenant secrets in a worker', function () {
        var name = "veetbot_worker_secrets_".concat((0, node_crypto_1.randomBytes)(6).toString('hex'));
        var dataDir = '';
        var worker;
        var database;
        var tenantId = "tenant-".concat((0, node_crypto_1.randomBytes)(4).toString('hex'));
        var principal = { tenant_id: tenantId, principal_id: 'p', scopes: [] };
        (0, vitest_1.beforeAll)(function () { return __awaiter(void 0, void 0, void 0, function () {
            var url, settings;
            return __generator(this, function (_a) {
                switch (_a.label) {
                    case 0: return [4 /*yield*/, (0, store_postgres_1.createDatabase)(serverUrl, name)];
                    case 1:
                        url = _a.sent();
                        return [4 /*yield*/, (0, promises_1.mkdtemp)((0, node_path_1.join)((0, node_os_1.tmpdir)(), 'veetbot-worker-secrets-'))];
                    case 2:
                        dataDir = _a.sent();
                        settings = (0, settings_1.readSettings)({ DATABASE_URL: url, VEETBOT_DATA_DIR: dataDir }, [], dataDir, 'worker');
                        return [4 /*yield*/, (0, database_1.openAndMigrate)(settings)];
                    case 3:
                        database = _a.sent();
                        return [4 /*yield*/, (0, compose_1.composeSystem)({ database: database, dataDir: settings.dataDir, secretsEnv: settings.secretsEnv, owner: 'secrets-test' })];
                    case 4:
                        worker = _a.sent();
                        return [4 /*yield*/, worker.stores.tenants.create({ id: tenantId, name: 'secrets', createdAt: new Date() })];
                    case 5:
                        _a.sent();
                        return [2 /*return*/];
                }
            });
        }); }, 120000);
        (0, vitest_1.afterAll)(function () { return __awaiter(void 0, void 0, void 0, function () {
            return __generator(this, function (_a) {
                switch (_a.label) {
                    case 0: return [4 /*yield*/, (worker === null || worker === void 0 ? void 0 : worker.close({ drainMs: 0 }))];
                    case 1:
                        _a.sent();
                        return [4 /*yield*/, (database === null || database === void 0 ? void 0 : database.close())];
                    case 2:
                        _a.sent();
                        return [4 /*yield*/, (0, store_postgres_1.dropDatabase)(serverUrl, name)];
                    case 3:
                        _a.sent();
                        return [4 /*yield*/, (0, promises_1.rm)(dataDir, { recursive: true, force: true })];
                    case 4:
                        _a.sent();
                        return [2 /*return*/];
                }
            });
        }); });
        var row = function (serverId, credentialRef) { return __awaiter(void 0, void 0, void 0, function () {
            return __generator(this, function (_a) {
                return [2 /*return*/, worker.stores.mcpServers.create(tenantId, {
                        serverId: serverId,
                        transport: 'http',
                        endpoint: 'https://127.0.0.1:1/mcp',
                        authScheme: 'bearer',
                        authName: null,
                        credentialRef: credentialRef,
                        tokenEndpoint: null,
                        tokenScopes: null,
                        sideEffect: 'external_read',
                        risk: 'low',
                        idempotency: 'read_only',
                        requiredScopes: [],
                        timeoutSeconds: 30,
                        maximumOutputBytes: 65536,
                        createdAt: new Date(),
                    })];
            });
        }); };
        (0, vitest_1.it)('shares the data folder key with the api, resolves the tenant secret, and refuses env:, file: and a foreign key', function () { return __awaiter(void 0, void 0, void 0, function () {
            var _a, keyring, foreign, prepared, reasons, _i, _b, refused;
            return __generator(this, function (_c) {
                switch (_c.label) {
                    case 0:
                        // The api side: the same data folder's key (generated by whichever process came first).
                        _a = vitest_1.expect;
                        return [4 /*yield*/, (0, promises_1.stat)((0, node_path_1.join)(dataDir, 'secrets.key'))];
                    case 1:
                        // The api side: the same data folder's key (generated by whichever process came first).
                        _a.apply(void 0, [(_c.sent()).mode & 511]).toBe(384);
                        return [4 /*yield*/, (0, credential_broker_1.loadSecretKeyring)({ env: {}, dataDir: dataDir })];
                    case 2:
                        keyring = (_c.sent()).keyring;
                        return [4 /*yield*/, worker.stores.tenantSecrets.put(tenantId, __assign(__assign({ name: 'GOOD' }, keyring.seal({ tenantId: tenantId, name: 'GOOD' }, 'good-value')), { at: new Date() }))];
                    case 3:
                        _c.sent();
                        foreign = new credential_broker_1.SecretKeyring((0, credential_broker_1.secretKey)((0, node_crypto_1.randomBytes)(32)));
                        return [4 /*yield*/, worker.stores.tenantSecrets.put(tenantId, __assign(__assign({ name: 'FOREIGN' }, foreign.seal({ tenantId: tenantId, name: 'FOREIGN' }, 'other-value')), { at: new Date() }))];
                    case 4:
                        _c.sent();
                        return [4 /*yield*/, row('good', 'secret:GOOD')];
                    case 5:
                        _c.sent();
                        return [4 /*yield*/, row('foreign', 'secret:FOREIGN')];
                    case 6:
                        _c.sent();
                        return [4 /*yield*/, row('missing', 'secret:MISSING')];
                    case 7:
                        _c.sent();
                        return [4 /*yield*/, row('operator_env', 'env:DATABASE_URL')];
                    case 8:
                        _c.sent();
                        return [4 /*yield*/, row('operator_file', 'file:/etc/hostname')];
                    case 9:
                        _c.sent();
                        return [4 /*yield*/, worker.mcp.prepareSession({ tenantId: tenantId, sessionId: globalThis.crypto.randomUUID(), principal: principal }, function () { return __awaiter(void 0, void 0, void 0, function () { return __generator(this, function (_a) {
                                return [2 /*return*/, ({ source: 'mcp', registered: [], rejected: [] })];
                            }); }); })];
                    case 10:
                        prepared = _c.sent();
                        reasons = Object.fromEntries(prepared.servers.map(function (s) { return [s.serverId, s.reasonCode]; }));
                        (0, vitest_1.expect)(reasons['good']).not.toBe('tool.auth_failed');
                        (0, vitest_1.expect)(reasons['good']).not.toBeNull();
                        for (_i = 0, _b = ['foreign', 'missing', 'operator_env', 'operator_file']; _i < _b.length; _i++) {
                            refused = _b[_i];
                            (0, vitest_1.expect)(reasons[refused], refused).toBe('tool.auth_failed');
                        }
                        return [2 /*return*/];
                }
            });
        }); });
    });
}
