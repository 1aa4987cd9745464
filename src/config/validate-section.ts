import { plainToInstance } from "class-transformer";
import { getMetadataStorage, validateSync, type ValidationError } from "class-validator";
import { unknownKeyMessage } from "../util/did-you-mean";
import type { IssueList } from "./issue-list";
import type { KeySegment } from "./key-path";

/**
 * Validates one mapping of the file against a schema class with class-validator, recording
 * every problem under its key path (unknown keys included). Returns the typed instance, also
 * when there were problems, so that callers can go on checking what they can.
 */
export function validateSection<T extends object>(cls: new () => T, plain: Record<string, unknown>, path: readonly KeySegment[], issues: IssueList): T {
  const instance = plainToInstance(cls, plain);
  const errors = validateSync(instance, {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    stopAtFirstError: true,
  });
  record(errors, path, issues);
  return instance;
}

/** Keys a schema class declares, in declaration order. */
export function knownKeys(cls: Function): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(cls, "", true, false);
  return [...new Set(metadata.map((m) => m.propertyName))];
}

function record(errors: readonly ValidationError[], path: readonly KeySegment[], issues: IssueList, inList = false): void {
  for (const error of errors) {
    const here = [...path, inList && /^\d+$/.test(error.property) ? Number(error.property) : error.property];
    const constraints = error.constraints ?? {};
    if (constraints.whitelistValidation !== undefined) {
      const owner = error.target?.constructor;
      issues.addUnknownKey(here, owner ? unknownKeyMessage(error.property, knownKeys(owner)) : "unknown key");
    } else {
      const first = Object.values(constraints)[0];
      if (first !== undefined) issues.add(here, first);
    }
    if (error.children && error.children.length > 0) record(error.children, here, issues, Array.isArray(error.value));
  }
}
