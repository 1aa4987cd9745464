import pg from "pg";
import { groupTaskSuite } from "./group-tasks-suite";
import { TEST_POSTGRES_URL, uniqueSchema } from "../store/postgres/postgres-fixture";

// The app's debounce and batch checks on a PostgreSQL store: a schema of its own per app.
const schemas: string[] = [];
groupTaskSuite(
  "postgres",
  () => {
    const schema = uniqueSchema("wt_groups");
    schemas.push(schema);
    return { store: `${TEST_POSTGRES_URL}?schema=${schema}` as `postgres://${string}` };
  },
  async () => {
    const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    try {
      for (const schema of schemas.splice(0)) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await client.end();
    }
  },
);
