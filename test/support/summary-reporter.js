"use strict";
// Mocha's spec reporter, plus the plain closing line CI reads: "N passed, N failed[, N skipped]".
// The suite runs files in parallel (.mocharc.json): a file's lines come out together when it ends.
const Mocha = require("mocha");

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    // Registered after Spec's own listener, so the line comes after mocha's epilogue.
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes, failures, pending } = runner.stats;
      process.stdout.write(`\n${passes} passed, ${failures} failed${pending ? `, ${pending} skipped` : ""}\n`);
    });
  }
}

module.exports = SpecWithSummary;
