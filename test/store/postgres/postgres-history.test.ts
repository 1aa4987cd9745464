import type { Store } from "../../../src/store/store";
import type { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { describeHistoryConformance } from "../history-conformance";
import { PostgresFixture } from "./postgres-fixture";

const fixture = new PostgresFixture();
const schemas = new Map<Store, string>();

function onSchema(schema: string): PostgresStore {
  const store = fixture.store({ schema });
  schemas.set(store, schema);
  return store;
}

describeHistoryConformance("postgres", () => onSchema(fixture.schema()), {
  cleanup: async () => {
    schemas.clear();
    await fixture.cleanup();
  },
  reopen: (closed) => onSchema(schemas.get(closed)!),
  replica: (open) => onSchema(schemas.get(open)!),
});
