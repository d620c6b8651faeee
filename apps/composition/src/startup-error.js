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
Object.defineProperty(exports, "__esModule", { value: true });
exports.StartupError = void 0;
exports.startupErrorLine = startupErrorLine;
var domain_1 = require("@veetbot/domain");
var StartupError = /** @class */ (function (_super) {
    __extends(StartupError, _super);
    function StartupError(code, message, options) {
        if (options === void 0) { options = {}; }
        return _super.call(this, code, message, { cause: options.cause }) || this;
    }
    return StartupError;
}(domain_1.VeetbotError));
exports.StartupError = StartupError;
/** The one line printed for a start-up failure (no stack: the code and message say what to fix). */
function startupErrorLine(error) {
    if (error instanceof StartupError)
        return "error ".concat(error.code, ": ").concat(error.message.split('\n').join(' '));
    var detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return "error startup.failed: ".concat(detail);
}
