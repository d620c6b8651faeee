"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.consoleSink = void 0;
exports.logEvent = logEvent;
var domain_1 = require("@veetbot/domain");
exports.consoleSink = {
    info: function (line) { return process.stdout.write("".concat(line, "\n")); },
    error: function (line) { return process.stderr.write("".concat(line, "\n")); },
};
var stepOf = function (s) { return "tenant=".concat(s.tenantId, " run=").concat(s.runId, " step=").concat(s.stepNumber); };
var codeOf = function (error) { return (domain_1.VeetbotError.isInstance(error) ? error.code : error instanceof Error ? error.name : 'unknown'); };
function logEvent(sink, event) {
    switch (event.kind) {
        case 'step_ran': {
            var outcome = event.outcome;
            var statuses_1 = outcome.items.map(function (i) { return i.outcome.status; });
            var count = function (status) { return statuses_1.filter(function (s) { return s === status; }).length; };
            sink.info("step ran ".concat(stepOf(event.step), " calls=").concat(statuses_1.length, " succeeded=").concat(count('succeeded'), " failed=").concat(count('failed'), " denied=").concat(count('denied'), " uncertain=").concat(count('uncertain'), " pending_approvals=").concat(outcome.pendingApprovals.length).concat(outcome.runFailed === null ? '' : " run_failed=".concat(outcome.runFailed)));
            return;
        }
        case 'step_busy':
            sink.info("step busy ".concat(stepOf(event.step), ": another worker holds the run"));
            return;
        case 'step_refused':
            sink.info("step refused ".concat(stepOf(event.step), " code=").concat(event.error.code));
            return;
        case 'step_unreadable':
            sink.error("step unreadable ".concat(stepOf(event.step), ": the stored batch does not parse"));
            return;
        case 'step_failed':
            sink.error("step failed ".concat(stepOf(event.step), " code=").concat(codeOf(event.error), " (will retry)"));
            return;
        case 'notify_failed':
            sink.error("notify failed ".concat(stepOf(event.step), " code=").concat(codeOf(event.error)));
            return;
        case 'claim_failed':
            sink.error("claim failed code=".concat(codeOf(event.error), " (will retry)"));
            return;
        case 'sweep_ran': {
            var r = event.report;
            // A quiet pass is not news.
            if (r.examined > 0)
                sink.info("sweep examined=".concat(r.examined, " recovered=").concat(r.recovered, " uncertain=").concat(r.uncertain, " failed=").concat(r.failed, " skipped=").concat(r.skipped));
            return;
        }
        case 'sweep_failed':
            sink.error("sweep failed code=".concat(codeOf(event.error), " (will retry)"));
            return;
    }
}
