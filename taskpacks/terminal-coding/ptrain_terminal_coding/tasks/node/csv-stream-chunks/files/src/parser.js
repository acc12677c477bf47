import { Transform } from "node:stream";

// Splits each chunk into records and fields.
export class CsvParser extends Transform {
  constructor() {
    super({ readableObjectMode: true });
  }

  _transform(chunk, encoding, callback) {
    const text = chunk.toString("utf8");
    for (const line of text.split("\n")) {
      if (line === "") continue;
      this.push(parseLine(line.replace(/\r$/, "")));
    }
    callback();
  }
}

function parseLine(line) {
  const fields = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      fields.push(field);
      field = "";
    } else field += c;
  }
  fields.push(field);
  return fields;
}
