// Render ZPL (stdin) to PNG files with Zebrash (zpl-renderer-js), so tests check our bytes with someone else's
// ZPL reader. Usage: node render_zpl.cjs WIDTH_MM HEIGHT_MM DPMM OUT_PREFIX -> writes OUT_PREFIX-N.png per label.
const fs = require("node:fs");
const { ready } = require("zpl-renderer-js");

async function main() {
  const [widthMm, heightMm, dpmm, prefix] = process.argv.slice(2);
  const zpl = fs.readFileSync(0, "latin1");
  const { api } = await ready;
  const labels = await api.zplToBase64MultipleAsync(zpl, Number(widthMm), Number(heightMm), Number(dpmm));
  labels.forEach((label, n) => fs.writeFileSync(`${prefix}-${n}.png`, Buffer.from(label, "base64")));
  console.log(labels.length);
}

main().catch((err) => {
  console.error(String(err && err.stack ? err.stack : err));
  process.exit(1);
});
