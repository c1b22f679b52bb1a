import { lossesOf } from "./audit.js";
import type { SoakReport } from "./soak.js";

/** The crash trials' figures as a table, and the verdict: what makes a run fail. */

/** Answers of one phase, e.g. `201×120 503×14 connection×3`. */
function answersOf(report: SoakReport, phase: string): string {
  const answers = report.answers.get(phase);
  if (!answers?.size) return "none";
  return [...answers]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([answer, n]) => `${answer}×${n}`)
    .join(" ");
}

function outageAnswers(report: SoakReport): Map<string, number> {
  return report.answers.get("outage") ?? new Map();
}

export function formatReport(report: SoakReport): string {
  const a = report.audit;
  const outage = outageAnswers(report);
  const rows: [string, string | number][] = [
    ["kills: api / worker / all", `${report.kills.api} / ${report.kills.worker} / ${report.kills.all}`],
    ["unexpected process exits", report.unexpectedExits],
    [
      "writes accepted (creates + patches)",
      `${a.expectedEvents} (${a.acceptedCreates} + ${a.acceptedPatches})`,
    ],
    ["writes refused (4xx, 500)", report.rejected.length],
    ["writes unresolved (no definite answer)", report.unresolved],
    ["events listed / expected", `${a.events} / ${a.expectedEvents}`],
    ["events missing (accepted write, no event)", a.missingEvents.length],
    ["events extra (no accepted write)", a.extraEvents.length],
    ["  of which creates applied twice", a.createsAppliedTwice],
    ["events delivered / undelivered", `${a.delivered} / ${a.undelivered.length}`],
    [
      "  undelivered: failed by the retry rules / lost",
      `${a.undeliveredFailed} / ${a.undelivered.length - a.undeliveredFailed}`,
    ],
    ["deliveries received (requests)", report.receiverRequests],
    ["duplicate deliveries (events twice+)", `${a.duplicateDeliveries} (${a.eventsDeliveredTwice})`],
    ["deliveries of unknown events", a.strayDeliveries],
    ["bad signatures", report.badSignatures],
    [
      "outage: 503 / 500 / hang (timeout)",
      `${outage.get("503") ?? 0} / ${outage.get("500") ?? 0} / ${outage.get("timeout") ?? 0}`,
    ],
    ["drain until all delivered", `${(report.drainMs / 1000).toFixed(1)} s`],
    ["run time", `${report.runSeconds.toFixed(0)} s`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`);
  lines.push("", "answers by phase:");
  for (const phase of report.answers.keys()) lines.push(`  ${phase.padEnd(9)} ${answersOf(report, phase)}`);
  return lines.join("\n");
}

/** Why the run failed, one line each; empty when it passed. */
export function failuresOf(report: SoakReport): string[] {
  const a = report.audit;
  const outage = outageAnswers(report);
  const failures: string[] = [];
  if (lossesOf(a) > 0) {
    failures.push(
      `losses: ${a.missingEvents.length} missing, ${a.extraEvents.length} extra, ${a.undelivered.length} undelivered ` +
        `(e.g. ${[...a.missingEvents, ...a.extraEvents, ...a.undelivered].slice(0, 5).join(" | ")})`,
    );
  }
  // Only 503 says "the database is away"; any other 5xx, or no answer in time, is a finding.
  const broken = [...outage.keys()].filter(
    (answer) => answer === "timeout" || (/^5\d\d$/.test(answer) && answer !== "503"),
  );
  if (broken.length)
    failures.push(`during the outage: ${broken.map((b) => `${b}×${outage.get(b)}`).join(", ")}`);
  if (report.rejected.length) {
    failures.push(
      `refused writes: ${report.rejected
        .slice(0, 3)
        .map((r) => `${r.write} → ${r.status} ${r.body}`)
        .join(" | ")}`,
    );
  }
  if (report.unresolved) failures.push(`${report.unresolved} writes never got a definite answer`);
  if (report.badSignatures) failures.push(`${report.badSignatures} deliveries with a bad signature`);
  return failures;
}
