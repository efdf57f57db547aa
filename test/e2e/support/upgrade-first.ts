import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The upgrade test first, then vitest's own order. It installs the previous release over a
 * database of its own, so it must find no Run of another file left (noRunsOfOtherFiles), and
 * after another file it waited minutes for that file's namespace to go; first, on a fresh node,
 * there is nothing to wait for, and nothing of this checkout's install to take down first.
 */
export class UpgradeFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isUpgrade = (file: TestSpecification): boolean => file.moduleId.endsWith('/upgrade.e2e.ts');
    return [...sorted.filter(isUpgrade), ...sorted.filter((file) => !isUpgrade(file))];
  }
}
