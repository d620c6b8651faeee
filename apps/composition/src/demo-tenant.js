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
exports.DEMO_SCOPES = exports.DEMO_PRINCIPAL_ID = exports.DEMO_TENANT_ID = void 0;
exports.ensureDemoTenant = ensureDemoTenant;
var api_keys_1 = require("./api-keys");
var provision_1 = require("./provision");
var startup_error_1 = require("./startup-error");
exports.DEMO_TENANT_ID = 'demo';
exports.DEMO_PRINCIPAL_ID = 'demo-admin';
/**
 * Every scope the builtins ask for, the two decision scopes, and the configuration scopes
 * (ADR 0017) the README walkthrough uses: adding MCP servers and the secrets they reference.
 */
exports.DEMO_SCOPES = ['approvals.decide', 'review.resolve', 'workspace.read', 'workspace.write', 'demo.write', 'mcp.*', 'mcp.servers.write', 'secrets.read', 'secrets.write'];
/** The demo tenant and its key, created once (idempotent across restarts on the same data). */
function ensureDemoTenant(stores, fixedKey, now) {
    return __awaiter(this, void 0, void 0, function () {
        var exists, provision, known;
        var _a;
        return __generator(this, function (_b) {
            switch (_b.label) {
                case 0: return [4 /*yield*/, stores.tenants.get(exports.DEMO_TENANT_ID)];
                case 1:
                    exists = (_b.sent()) !== null;
                    provision = function (key) {
                        return (0, provision_1.provisionTenantKey)(stores, __assign({ tenantId: exports.DEMO_TENANT_ID, tenantName: 'Demo tenant', principalId: exports.DEMO_PRINCIPAL_ID, scopes: exports.DEMO_SCOPES, now: now }, (key === undefined ? {} : { key: key })));
                    };
                    if (!(fixedKey !== null)) return [3 /*break*/, 4];
                    return [4 /*yield*/, stores.apiKeys.findByHash((0, api_keys_1.hashApiKey)(fixedKey))];
                case 2:
                    known = _b.sent();
                    if (known !== null && known.tenantId === exports.DEMO_TENANT_ID && known.revokedAt === null)
                        return [2 /*return*/, { kind: 'fixed', key: fixedKey, created: false }];
                    if (known !== null)
                        throw new startup_error_1.StartupError('startup.config_invalid', 'VEETBOT_DEMO_API_KEY names a revoked key or a key of another tenant');
                    return [4 /*yield*/, provision(fixedKey)];
                case 3:
                    _b.sent();
                    return [2 /*return*/, { kind: 'fixed', key: fixedKey, created: true }];
                case 4:
                    if (exists)
                        return [2 /*return*/, { kind: 'existing' }];
                    _a = { kind: 'created' };
                    return [4 /*yield*/, provision()];
                case 5: return [2 /*return*/, (_a.key = (_b.sent()).key, _a)];
            }
        });
    });
}
