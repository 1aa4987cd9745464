/**
 * The claim functions of limited and of grouped tasks plan their statements on every call.
 *
 * PL/pgSQL keeps a plan for each statement of a function, and after five calls uses a generic
 * one when it looks no costlier. A store's first claims run on a nearly empty `messages`, so
 * the generic plan kept for the UPDATE of the chosen rows scans the whole table and joins it
 * to them in a loop: 300 ms for one claim of 16 messages once 25,000 waited (of this queue and
 * others). Planned per call, the planner sees the table as it is and finds the rows by key.
 */
export const CLAIM_PLANS_MIGRATION = `
  ALTER FUNCTION $schema.claim_limited(text, integer, bigint, text, integer, integer, integer, integer)
    SET plan_cache_mode = force_custom_plan;
  ALTER FUNCTION $schema.claim_groups(text, boolean, double precision, double precision, integer, integer, bigint, text, integer)
    SET plan_cache_mode = force_custom_plan;
`;
