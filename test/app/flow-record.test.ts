import { expect } from "chai";
import { declareKeyPath, FLOW_RECORDS_NAMESPACE, flowRecordOf, recordTaskFlows, replayFlowOfRecord } from "../../src/app/flow/flow-record";
import { flowKeyFunction } from "../../src/config/flow-key";
import { MemoryStore } from "../../src/store/memory/memory-store";
import type { TaskFlow } from "../../src/app/flow/flow-options";

describe("flow records: a task's limits as the CLI reads them from the store", () => {
  const code = (event: { body: { shop: string } }) => event.body.shop;

  it("notes a limit's key as a YAML path, as code, or as none, and says which cannot be computed without the app", () => {
    const path = flowKeyFunction("body.shop", true);
    const flow: TaskFlow = { concurrency: { limit: 2, key: path }, rate: { limit: 5, periodMs: 1_000, key: undefined } };
    const record = flowRecordOf("webhook:t", flow);
    expect(record).to.deep.equal({ queue: "webhook:t", concurrency: { limit: 2, key: { path: "body.shop", webhook: true } }, rate: { limit: 5, periodMs: 1_000 } });
    const replay = replayFlowOfRecord(record, flowKeyFunction) as TaskFlow;
    expect(replay.concurrency!.limit).to.equal(2);
    expect(replay.concurrency!.key!({ body: { shop: "s-9" } } as never)).to.equal("s-9");
    expect(replay.rate).to.deep.equal({ limit: 5, periodMs: 1_000, key: undefined });

    const coded = flowRecordOf("webhook:t", { concurrency: { limit: 1, key: code as never }, rate: { limit: 1, periodMs: 10, key: code as never } });
    expect(coded.concurrency!.key).to.deep.equal({ code: true });
    expect(replayFlowOfRecord(coded, flowKeyFunction)).to.deep.equal({ refused: "its concurrency.key and rateLimit.key are functions of the app's code" });
    expect(replayFlowOfRecord(flowRecordOf("q", undefined), flowKeyFunction)).to.equal(undefined);
    // Only a function made from a path is a path: another function with the same text is code.
    expect(flowRecordOf("q", { concurrency: { limit: 1, key: declareKeyPath(() => "x", "body.x", true) } }).concurrency!.key).to.deep.equal({ path: "body.x", webhook: true });
    expect(flowRecordOf("q", { concurrency: { limit: 1, key: (() => "x") as never } }).concurrency!.key).to.deep.equal({ code: true });
  });

  it("notes every task, those without limits too, and writes nothing again when a restart finds the same limits", async () => {
    const store = new MemoryStore();
    await store.open();
    const state = store.state(FLOW_RECORDS_NAMESPACE);
    const tasks = [
      { name: "a", queue: "webhook:a", flow: undefined },
      { name: "b", queue: "orders", flow: { concurrency: { limit: 3, key: undefined } } },
    ];
    await recordTaskFlows(state, tasks);
    expect(await state.get("a")).to.deep.equal({ queue: "webhook:a" });
    expect(await state.get("b")).to.deep.equal({ queue: "orders", concurrency: { limit: 3 } });
    let writes = 0;
    const counting = { ...state, get: state.get.bind(state), set: async (...args: Parameters<typeof state.set>) => void (writes++, await state.set(...args)) } as typeof state;
    await recordTaskFlows(counting, tasks);
    expect(writes).to.equal(0);
    await recordTaskFlows(counting, [{ ...tasks[1], flow: { concurrency: { limit: 4, key: undefined } } }]);
    expect(writes).to.equal(1);
    expect(await state.get("b")).to.deep.equal({ queue: "orders", concurrency: { limit: 4 } });
    await store.close();
  });
});
