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
exports.redactUrl = redactUrl;
exports.databaseLabel = databaseLabel;
exports.openAndMigrate = openAndMigrate;
exports.classifyStartupDatabaseError = classifyStartupDatabaseError;
var node_fs_1 = require("node:fs");
var node_path_1 = require("node:path");
var domain_1 = require("@veetbot/domain");
var store_postgres_1 = require("@veetbot/store-postgres");
var startup_error_1 = require("./startup-error");
/** The URL without its password, for a message. */
function redactUrl(url) {
    try {
        var parsed = new URL(url);
        if (parsed.password)
            parsed.password = '***';
        return parsed.toString();
    }
    catch (_a) {
        return '(an unparsable DATABASE_URL)';
    }
}
/** Where the settings put the data: for the progress lines and error messages. */
function databaseLabel(settings) {
    return settings.databaseUrl === null ? "PGlite in ".concat((0, node_path_1.join)(settings.dataDir, 'pglite')) : "PostgreSQL at ".concat(redactUrl(settings.databaseUrl));
}
/**
 * Open the database the settings name and apply every migration (an advisory lock serialises
 * roles migrating together). The first contact is bounded by VEETBOT_STARTUP_TIMEOUT_MS: a
 * database that never answers is a start-up error, not a hang. A server that answers but has
 * no such database (SQLSTATE 3D000) is `startup.database_missing` naming it, so the operator
 * knows to create it rather than to look for a network fault.
 */
function openAndMigrate(settings) {
    return __awaiter(this, void 0, void 0, function () {
        var where, database, cause_1, timer, timeout, answer, cause_2;
        return __generator(this, function (_a) {
            switch (_a.label) {
                case 0:
                    where = databaseLabel(settings);
                    if (settings.databaseUrl === null)
                        lockPglite(settings.dataDir);
                    _a.label = 1;
                case 1:
                    _a.trys.push([1, 3, , 4]);
                    return [4 /*yield*/, (0, store_postgres_1.openDatabase)(settings.databaseUrl === null ? { dataDir: (0, node_path_1.join)(settings.dataDir, 'pglite') } : __assign({ url: settings.databaseUrl }, (settings.poolSize === undefined ? {} : { poolSize: settings.poolSize })))];
                case 2:
                    database = _a.sent();
                    return [3 /*break*/, 4];
                case 3:
                    cause_1 = _a.sent();
                    throw new startup_error_1.StartupError('startup.database_unreachable', "".concat(where, ": ").concat(firstLine(cause_1)), { cause: cause_1 });
                case 4:
                    timeout = new Promise(function (done) { return (timer = setTimeout(function () { return done('timeout'); }, settings.startupTimeoutMs)); });
                    _a.label = 5;
                case 5:
                    _a.trys.push([5, 7, 9, 10]);
                    return [4 /*yield*/, Promise.race([(0, store_postgres_1.migrate)(database).then(function () { return 'ok'; }), timeout])];
                case 6:
                    answer = _a.sent();
                    if (answer === 'timeout')
                        throw new startup_error_1.StartupError('startup.database_unreachable', "".concat(where, " did not answer within ").concat(settings.startupTimeoutMs, " ms"));
                    return [2 /*return*/, database];
                case 7:
                    cause_2 = _a.sent();
                    return [4 /*yield*/, database.close().catch(function () { return undefined; })];
                case 8:
                    _a.sent();
                    if (cause_2 instanceof startup_error_1.StartupError)
                        throw cause_2;
                    throw classifyStartupDatabaseError(cause_2, settings);
                case 9:
                    clearTimeout(timer);
                    return [7 /*endfinally*/];
                case 10: return [2 /*return*/];
            }
        });
    });
}
/**
 * PGlite is one process: a second process opening the same folder (a `veetbot key create` while
 * `pnpm start` runs, or a second `pnpm start` on another port) would corrupt it. A lock file
 * holding the owner's pid refuses that with `startup.database_in_use`; a lock left by a process
 * that no longer exists (a crash, kill -9) is taken over. Released when this process exits.
 */
function lockPglite(dataDir) {
    var _a;
    var path = (0, node_path_1.join)(dataDir, 'pglite.lock');
    (0, node_fs_1.mkdirSync)(dataDir, { recursive: true, mode: 448 });
    for (var attempt = 0; attempt < 2; attempt++) {
        try {
            (0, node_fs_1.writeFileSync)(path, String(process.pid), { flag: 'wx', mode: 384 });
            process.once('exit', function () {
                try {
                    if ((0, node_fs_1.readFileSync)(path, 'utf8') === String(process.pid))
                        (0, node_fs_1.unlinkSync)(path);
                }
                catch (_a) {
                    // Already gone.
                }
            });
            return;
        }
        catch (cause) {
            if (cause.code !== 'EEXIST') {
                throw new startup_error_1.StartupError('startup.config_invalid', "".concat(path, " cannot be written (").concat((_a = cause.code) !== null && _a !== void 0 ? _a : 'error', ")"), { cause: cause });
            }
        }
        var holder = Number((0, node_fs_1.readFileSync)(path, 'utf8').trim());
        if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
            throw new startup_error_1.StartupError('startup.database_in_use', "PGlite in ".concat((0, node_path_1.join)(dataDir, 'pglite'), " is open in process ").concat(holder, " (pnpm start?). PGlite belongs to one process: stop that process first, or use PostgreSQL (DATABASE_URL) to run several."));
        }
        // Stale: its process is gone.
        (0, node_fs_1.unlinkSync)(path);
    }
    throw new startup_error_1.StartupError('startup.database_in_use', "PGlite in ".concat((0, node_path_1.join)(dataDir, 'pglite'), " is being opened by another process."));
}
function alive(pid) {
    try {
        process.kill(pid, 0);
        return true;
    }
    catch (error) {
        return error.code === 'EPERM';
    }
}
/** A driver failure at start-up as the operator should read it. */
function classifyStartupDatabaseError(cause, settings) {
    var where = databaseLabel(settings);
    if (domain_1.StoreError.isInstance(cause) && cause.sqlstate === '3D000' && settings.databaseUrl !== null) {
        var name_1 = databaseName(settings.databaseUrl);
        return new startup_error_1.StartupError('startup.database_missing', "The database \"".concat(name_1, "\" does not exist on the server at ").concat(redactUrl(settings.databaseUrl), ". Create it (createdb ").concat(name_1, ", or CREATE DATABASE \"").concat(name_1, "\") or point DATABASE_URL at an existing one."), { cause: cause });
    }
    if (domain_1.VeetbotError.isInstance(cause) && cause.code === 'store.connection') {
        return new startup_error_1.StartupError('startup.database_unreachable', "".concat(where, " could not be reached."), { cause: cause });
    }
    if (domain_1.StoreError.isInstance(cause)) {
        return new startup_error_1.StartupError('startup.migration_failed', "".concat(where, ": applying migrations failed (").concat(cause.code).concat(cause.sqlstate === null ? '' : ", SQLSTATE ".concat(cause.sqlstate), ")."), { cause: cause });
    }
    return new startup_error_1.StartupError('startup.database_unreachable', "".concat(where, ": ").concat(firstLine(cause)), { cause: cause });
}
function databaseName(url) {
    try {
        return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres';
    }
    catch (_a) {
        return '(unknown)';
    }
}
function firstLine(error) {
    var _a;
    return error instanceof Error ? ((_a = error.message.split('\n')[0]) !== null && _a !== void 0 ? _a : '') : String(error);
}
