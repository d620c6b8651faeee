"use strict";
var __extends = (this && this.__extends) || (function () {
    var extendStatics = function (d, b) {
        extendStatics = Object.setPrototypeOf ||
            ({ __proto__: [] } instanceof Array && function (d, b) { d.__proto__ = b; }) ||
            function (d, b) { for (var p in b) if (Object.prototype.hasOwnProperty.call(b, p)) d[p] = b[p]; };
        return extendStatics(d, b);
    };
    return function (d, b) {
        if (typeof b !== "function" && b !== null)
            throw new TypeError("Class extends value " + String(b) + " is not a constructor or null");
        extendStatics(d, b);
        function __() { this.constructor = d; }
        d.prototype = b === null ? Object.create(b) : (__.prototype = b.prototype, new __());
    };
})();
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
var __spreadArray = (this && this.__spreadArray) || function (to, from, pack) {
    if (pack || arguments.length === 2) for (var i = 0, l = from.length, ar; i < l; i++) {
        if (ar || !(i in from)) {
            if (!ar) ar = Array.prototype.slice.call(from, 0, i);
            ar[i] = from[i];
        }
    }
    return to.concat(ar || Array.prototype.slice.call(from));
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.ProvisionError = exports.SCOPE_PATTERN = exports.IDENTIFIER_PATTERN = void 0;
exports.createTenant = createTenant;
exports.createApiKey = createApiKey;
exports.provisionTenantKey = provisionTenantKey;
exports.revokeApiKey = revokeApiKey;
var domain_1 = require("@veetbot/domain");
var api_keys_1 = require("./api-keys");
/** A tenant id and a principal id as operator tooling accepts them: short, printable, no spaces. */
exports.IDENTIFIER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
/** A scope: dotted words, optionally ending in `.*` (domain's hasScope matches that wildcard). */
exports.SCOPE_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*(\.\*)?$/;
var UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Operator tooling refused its input (the CLI prints it as `error <code>: <message>`). */
var ProvisionError = /** @class */ (function (_super) {
    __extends(ProvisionError, _super);
    function ProvisionError(code, message) {
        var _this = _super.call(this, message) || this;
        _this.name = 'ProvisionError';
        _this.code = code;
        return _this;
    }
    return ProvisionError;
}(Error));
exports.ProvisionError = ProvisionError;
/** A tenant (idempotent on its id: a second create keeps the first row). */
function createTenant(stores, options) {
    return __awaiter(this, void 0, void 0, function () {
        var existed;
        var _a;
        return __generator(this, function (_b) {
            switch (_b.label) {
                case 0:
                    if (!exports.IDENTIFIER_PATTERN.test(options.tenantId))
                        throw new ProvisionError('provision.invalid', 'A tenant id is 1 to 63 of A-Z a-z 0-9 . _ -, starting with a letter or digit.');
                    return [4 /*yield*/, stores.tenants.get(options.tenantId)];
                case 1:
                    existed = (_b.sent()) !== null;
                    return [4 /*yield*/, stores.tenants.create({ id: options.tenantId, name: (_a = options.tenantName) !== null && _a !== void 0 ? _a : options.tenantId, createdAt: options.now })];
                case 2:
                    _b.sent();
                    return [2 /*return*/, { created: !existed }];
            }
        });
    });
}
/**
 * One API key of an existing tenant, for a principal with exactly these scopes. The key is
 * stored as its sha256 (the key itself never reaches the database); `key` may fix it
 * (VEETBOT_DEMO_API_KEY), else it is random.
 */
function createApiKey(stores, options) {
    return __awaiter(this, void 0, void 0, function () {
        var bad, key, row;
        var _a;
        return __generator(this, function (_b) {
            switch (_b.label) {
                case 0:
                    if (!exports.IDENTIFIER_PATTERN.test(options.principalId))
                        throw new ProvisionError('provision.invalid', 'A principal id is 1 to 63 of A-Z a-z 0-9 . _ -, starting with a letter or digit.');
                    bad = options.scopes.find(function (s) { return !exports.SCOPE_PATTERN.test(s); });
                    if (bad !== undefined)
                        throw new ProvisionError('provision.invalid', "".concat(JSON.stringify(bad), " is not a scope (dotted words, optionally ending in .*)."));
                    return [4 /*yield*/, stores.tenants.get(options.tenantId)];
                case 1:
                    if ((_b.sent()) === null)
                        throw new ProvisionError('provision.tenant_unknown', "There is no tenant ".concat(JSON.stringify(options.tenantId), " (veetbot tenant create ").concat(options.tenantId, ")."));
                    key = (_a = options.key) !== null && _a !== void 0 ? _a : (0, api_keys_1.generateApiKey)();
                    return [4 /*yield*/, stores.apiKeys.create(options.tenantId, {
                            keyHash: (0, api_keys_1.hashApiKey)(key),
                            prefix: (0, api_keys_1.apiKeyPrefix)(key),
                            principalId: options.principalId,
                            scopes: __spreadArray([], new Set(options.scopes), true),
                            createdAt: options.now,
                        })];
                case 2:
                    row = _b.sent();
                    return [2 /*return*/, { key: key, keyId: row.id }];
            }
        });
    });
}
/** A tenant (idempotent) and one API key for a principal with these scopes. */
function provisionTenantKey(stores, options) {
    return __awaiter(this, void 0, void 0, function () {
        return __generator(this, function (_a) {
            switch (_a.label) {
                case 0: return [4 /*yield*/, createTenant(stores, { tenantId: options.tenantId, tenantName: options.tenantName, now: options.now })];
                case 1:
                    _a.sent();
                    return [2 /*return*/, createApiKey(stores, options)];
            }
        });
    });
}
/**
 * Revoke a key, named by the key itself (its hash is looked up) or by its id within a tenant.
 * Idempotent: revoking a revoked key keeps the first revocation time.
 */
function revokeApiKey(stores, target, now) {
    return __awaiter(this, void 0, void 0, function () {
        var row, unknown, cause_1;
        return __generator(this, function (_a) {
            switch (_a.label) {
                case 0:
                    if (!('key' in target)) return [3 /*break*/, 2];
                    return [4 /*yield*/, stores.apiKeys.findByHash((0, api_keys_1.hashApiKey)(target.key))];
                case 1:
                    row = _a.sent();
                    if (row === null)
                        throw new ProvisionError('provision.key_unknown', 'No key with that value exists.');
                    return [2 /*return*/, row.revokedAt === null ? stores.apiKeys.revoke(row.tenantId, row.id, now) : row];
                case 2:
                    unknown = function () { return new ProvisionError('provision.key_unknown', "Tenant ".concat(JSON.stringify(target.tenantId), " has no key ").concat(JSON.stringify(target.keyId), ".")); };
                    if (!UUID.test(target.keyId))
                        throw unknown();
                    _a.label = 3;
                case 3:
                    _a.trys.push([3, 5, , 6]);
                    return [4 /*yield*/, stores.apiKeys.revoke(target.tenantId, target.keyId, now)];
                case 4: return [2 /*return*/, _a.sent()];
                case 5:
                    cause_1 = _a.sent();
                    if (domain_1.VeetbotError.isInstance(cause_1) && cause_1.code === 'store.not_found')
                        throw unknown();
                    throw cause_1;
                case 6: return [2 /*return*/];
            }
        });
    });
}
