// Browser tests of a whole dump folder (issue 24): the jax 0.12 CPU `mlp_train` folder of
// tests/fixtures/folders, with XLA's other output beside it, picked as a folder. Its HLO
// texts are read after the diagrams: the answers give real source lines (programs.py, not
// "stack frame N"), the details show a value's call stack and HLO instruction, and an
// operand's link selects that operand's value; no red line for the folder's other files.
//   node tests/e2e/folder.test.mjs http://127.0.0.1:PORT/   (tests/e2e/run.sh runs it)
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assert, fixture, open, run, search, test } from './harness.mjs';

const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;
// The module as the page names it (XLA's name), and its files' stem.
const STEP = 'jit_mlp_train_step';
const STEM = 'module_0004.jit_mlp_train_step.cpu_after_optimizations';

test('a dump folder picked whole: source lines, stacks, an instruction with a working operand link', async () => {
  const before = app.consoleErrors.length;
  await app.load();
  const src = path.dirname(fixture(`folders/mlp_train/${STEM}.txt`));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bufscope-folder-'));
  const folder = path.join(dir, 'xla_dump');
  cpSync(src, folder, { recursive: true });
  // What else --xla_dump_to writes beside the dump.
  writeFileSync(path.join(folder, 'module_0004.jit_mlp_train_step.cpu_before_optimizations.txt'), 'HloModule jit_mlp_train_step\n');
  writeFileSync(path.join(folder, 'module_0004.jit_mlp_train_step.debug_options'), 'xla_dump_to: "x"\n');
  writeFileSync(path.join(folder, 'module_0004.jit_mlp_train_step.ir-no-opt.ll'), '; ModuleID\n');
  try {
    await page.locator('#dir-input').setInputFiles(folder);
    await page.waitForFunction(
      // The text before optimizations is read (joined as the module's, for the waste answer).
      () => /2 other files of the dump folder skipped/.test(document.querySelector('.files-line')?.textContent ?? ''),
      null,
      { timeout: 20000 },
    );
    const line = await page.locator('.files-line').textContent();
    assert(/^Read 12 files \(and 4 HLO module texts/.test(line), `files line: ${line}`);
    assert((await page.locator('.message.error').count()) === 0, `an error is shown: ${await page.locator('.report').textContent()}`);
    await app.chooseModule(STEP);
    // The answers' source lines, once the HLO text is joined: files and functions.
    const toggle = page.locator('#answers .answers-toggle');
    if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
    await page.waitForFunction(
      () => [...document.querySelectorAll('#answers-source tr.source-row td.name')].some((td) => /programs\.py:\d+ in /.test(td.textContent)),
      null,
      { timeout: 20000 },
    );
    const rows = await page.locator('#answers-source tr.source-row td.name').allTextContents();
    assert(!rows.some((r) => /stack frame/.test(r)), `a frame id is shown: ${rows.join(' | ')}`);
    // A fusion of the forward pass: `%ynn_fusion.9 = f32[128,512]{1,0} fusion(%x.1, %params_0___w__.1)`.
    await search(page, 'ynn_fusion.9');
    await page.locator('#search').press('Enter');
    await page.waitForFunction(() => document.querySelector('#details .details-name')?.textContent === 'ynn_fusion.9', null, { timeout: 5000 });
    await page.locator('#details .hlo-instruction').waitFor({ timeout: 10000 });
    const computation = await page.locator('#details .hlo-computation').textContent();
    assert(computation.startsWith('main.24'), `computation: ${computation}`);
    assert((await page.locator('#details .call-stack li').count()) > 0, 'no call stack');
    const source = await page.locator('#details .source').textContent();
    assert(/programs\.py:\d+ in /.test(source), `source: ${source}`);
    await page.locator('#details .call-stack').scrollIntoViewIfNeeded();
    await app.screenshot('folder-01-stack.png');
    await page.locator('#details .hlo-instruction').scrollIntoViewIfNeeded();
    await app.screenshot('folder-01-instruction.png');
    // The second operand's link selects the parameter, named by its pytree path.
    const link = page.locator('#details .operand-link', { hasText: '%params_0___w__.1' });
    await link.click();
    await page.waitForFunction(
      () => document.querySelector('#details .details-name')?.textContent === "params_0___w__.1 params[0]['w']",
      null,
      { timeout: 5000 },
    );
    await app.screenshot('folder-02-operand.png');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  app.noNewConsoleErrors(before);
});

await run(app);
