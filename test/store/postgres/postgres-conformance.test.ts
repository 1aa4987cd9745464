import { PostgresFixture } from "./postgres-fixture";
import { storeConformance } from "../store-conformance";

const fixture = new PostgresFixture();

storeConformance("postgres", {
  create: (limits) => fixture.store({ maxQueued: limits?.maxQueued }),
  cleanup: () => fixture.cleanup(),
});
