import { AppConfig } from "./app-config";
import { Mapping, Optional, Required, Section, SectionList } from "./rules";
import { TaskConfig } from "./task-config";

/** The whole file: `app`, `resources`, `tasks`. Resources are checked one by one, per type. */
export class WorkerConfigDocument {
  @Optional() @Section(() => AppConfig) app?: AppConfig;
  @Required() @Mapping() resources!: Record<string, unknown>;
  @Required() @SectionList(() => TaskConfig) tasks!: TaskConfig[];
}
