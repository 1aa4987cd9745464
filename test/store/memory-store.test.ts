import { MemoryStore } from "../../src/store/memory/memory-store";
import { storeConformance } from "./store-conformance";

storeConformance("memory", { create: (limits) => new MemoryStore(limits) });
