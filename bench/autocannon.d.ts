// autocannon ships no type declarations; the harness uses a small part of its API (load-keep-alive.ts).
declare module "autocannon";
