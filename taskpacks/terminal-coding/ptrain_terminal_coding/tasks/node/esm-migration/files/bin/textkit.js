#!/usr/bin/env node
const { slugify, truncate, wordCount } = require("../src");

const [command, ...args] = process.argv.slice(2);
if (command === "slug") console.log(slugify(args.join(" ")));
else if (command === "truncate") console.log(truncate(args.slice(1).join(" "), Number(args[0])));
else if (command === "words") console.log(wordCount(args.join(" ")));
else {
  console.error("usage: textkit slug TEXT | truncate N TEXT | words TEXT");
  process.exit(2);
}
