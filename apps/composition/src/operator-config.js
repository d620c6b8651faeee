"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.serverEverythingEntry = serverEverythingEntry;
exports.exampleOperatorConfig = exampleOperatorConfig;
exports.prepareOperatorConfig = prepareOperatorConfig;
var node_fs_1 = require("node:fs");
var node_path_1 = require("node:path");
var node_url_1 = require("node:url");
var mcp_adapter_1 = require("@veetbot/mcp-adapter");
var startup_error_1 = require("./startup-error");
/**
 * Where @modelcontextprotocol/server-everything's entry point is: this app's own dependency,
 * found through the file system (its package.json `bin`), never imported — only the MCP adapter
 * may import an `@modelcontextprotocol` package. Null when it is not installed.
 */
function serverEverythingEntry() {
    var _a;
    var folder = (0, node_url_1.fileURLToPath)(new URL('../node_modules/@modelcontextprotocol/server-everything', import.meta.url));
    try {
        var manifest = JSON.parse((0, node_fs_1.readFileSync)((0, node_path_1.join)(folder, 'package.json'), 'utf8'));
        var bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values((_a = manifest.bin) !== null && _a !== void 0 ? _a : {})[0];
        if (bin === undefined)
            return null;
        var entry = (0, node_fs_1.realpathSync)((0, node_path_1.join)(folder, bin));
        return (0, node_fs_1.existsSync)(entry) ? entry : null;
    }
    catch (_b) {
        return null;
    }
}
/**
 * The example operator configuration written on first start (when the file does not exist):
 * server-everything as a stdio MCP server, started as `node <its dist/index.js> stdio`. stdio
 * servers live here and only here (§ Where a server may live). Its tools are demo tools that
 * touch nothing outside the process, so the example classifies them as reads.
 */
function exampleOperatorConfig(nodePath, entry) {
    return {
        mcp: {
            // The egress policy of the operator's HTTP servers (the switches of `veetbot mcp check`);
            // tenant servers keep the strict default unless `tenant_egress` says otherwise (ADR 0022).
            egress: { allow_hosts: [], allow_http: false, allow_private_addresses: false },
            servers: entry === null
                ? []
                : [
                    {
                        server_id: 'everything',
                        transport: 'stdio',
                        endpoint: nodePath,
                        args: [entry, 'stdio'],
                        auth_scheme: 'none',
                        side_effect: 'none',
                        risk: 'low',
                        idempotency: 'read_only',
                        timeout_seconds: 30,
                        maximum_output_bytes: 1048576,
                    },
                ],
        },
    };
}
/** Write the example once (never over an existing file), then load and validate the file. */
function prepareOperatorConfig(path) {
    var _a, _b, _c;
    var written = false;
    if (!(0, node_fs_1.existsSync)(path)) {
        try {
            (0, node_fs_1.writeFileSync)(path, "".concat(JSON.stringify(exampleOperatorConfig(process.execPath, serverEverythingEntry()), null, 2), "\n"), { flag: 'wx', mode: 384 });
            written = true;
        }
        catch (cause) {
            // Another role of the same deployment wrote it first (api and worker starting together).
            if (cause.code === 'EEXIST')
                return prepareOperatorConfig(path);
            throw new startup_error_1.StartupError('startup.config_invalid', "".concat(path, ": cannot write the example operator configuration in ").concat((0, node_path_1.dirname)(path), " (").concat((_a = cause.code) !== null && _a !== void 0 ? _a : 'error', ")"), { cause: cause });
        }
    }
    try {
        return { config: (0, mcp_adapter_1.loadOperatorConfig)(path), written: written };
    }
    catch (error) {
        if (error instanceof mcp_adapter_1.OperatorConfigError) {
            var first = error.errors[0];
            var more = error.errors.length > 1 ? " (and ".concat(error.errors.length - 1, " more)") : '';
            throw new startup_error_1.StartupError('startup.config_invalid', "".concat(path, " at ").concat((first === null || first === void 0 ? void 0 : first.path) || '(root)', ": ").concat((_b = first === null || first === void 0 ? void 0 : first.code) !== null && _b !== void 0 ? _b : 'mcp.config.invalid', ": ").concat((_c = first === null || first === void 0 ? void 0 : first.message) !== null && _c !== void 0 ? _c : 'invalid').concat(more), { cause: error });
        }
        throw error;
    }
}
