"use strict";
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
exports.operationsListener = operationsListener;
/**
 * A worker-only process's own port (VEETBOT_WORKER_PORT): `/healthz`, `/readyz` and `/metrics`,
 * with the same bodies as the api's (apps/api/src/routes/health.ts), no API key (they carry no
 * tenant data; metrics have no tenant label). In the split deployment the tool calls run here, so
 * their metrics (`tool_calls_total`, `tool_uncertain_total`, the MCP counters) are read here.
 * `system` is null while the process starts: probes answer, /readyz says not ready.
 */
function operationsListener(current) {
    return function (req, res) {
        void answer(current(), req, res).catch(function () {
            if (!res.headersSent)
                res.writeHead(500, { 'Content-Type': 'application/json' });
            res.end(JSON.stringify({ error: { code: 'internal', message: 'An internal error occurred.' } }));
        });
    };
}
function answer(system, req, res) {
    return __awaiter(this, void 0, void 0, function () {
        var path, json, report, _a, ready, text, _b;
        var _c, _d, _e, _f, _g, _h;
        return __generator(this, function (_j) {
            switch (_j.label) {
                case 0:
                    path = ((_c = req.url) !== null && _c !== void 0 ? _c : '/').split('?')[0];
                    json = function (status, body) {
                        res.writeHead(status, { 'Content-Type': 'application/json' });
                        res.end(JSON.stringify(body));
                    };
                    if (req.method !== 'GET' && req.method !== 'HEAD')
                        return [2 /*return*/, json(405, { error: { code: 'method_not_allowed', message: 'Only GET is served here.' } })];
                    if (path === '/healthz')
                        return [2 /*return*/, json(200, { status: 'ok' })];
                    if (!(path === '/readyz')) return [3 /*break*/, 4];
                    if (!(system === null)) return [3 /*break*/, 1];
                    _a = null;
                    return [3 /*break*/, 3];
                case 1: return [4 /*yield*/, system.readiness().catch(function () { return null; })];
                case 2:
                    _a = _j.sent();
                    _j.label = 3;
                case 3:
                    report = _a;
                    ready = (_d = report === null || report === void 0 ? void 0 : report.ready) !== null && _d !== void 0 ? _d : false;
                    return [2 /*return*/, json(ready ? 200 : 503, {
                            status: ready ? 'ready' : 'not_ready',
                            database: { reachable: (_e = report === null || report === void 0 ? void 0 : report.reachable) !== null && _e !== void 0 ? _e : false, migrations_applied: (_f = report === null || report === void 0 ? void 0 : report.migrationsApplied) !== null && _f !== void 0 ? _f : 0, migrations_expected: (_g = report === null || report === void 0 ? void 0 : report.migrationsExpected) !== null && _g !== void 0 ? _g : 0 },
                        })];
                case 4:
                    if (!(path === '/metrics')) return [3 /*break*/, 8];
                    if (!(system === null)) return [3 /*break*/, 5];
                    _b = '';
                    return [3 /*break*/, 7];
                case 5: return [4 /*yield*/, system.metrics.metricsText()];
                case 6:
                    _b = _j.sent();
                    _j.label = 7;
                case 7:
                    text = _b;
                    res.writeHead(200, { 'Content-Type': (_h = system === null || system === void 0 ? void 0 : system.metrics.contentType) !== null && _h !== void 0 ? _h : 'text/plain; version=0.0.4; charset=utf-8' });
                    res.end(text);
                    return [2 /*return*/];
                case 8: return [2 /*return*/, json(404, { error: { code: 'not_found', message: 'No such resource (the worker port serves /healthz, /readyz, /metrics).' } })];
            }
        });
    });
}
