cd /workspace && cat > src/parser.js <<'JS'
import { Transform } from "node:stream";
import { StringDecoder } from "node:string_decoder";

// A state machine over characters, kept across chunks: the output does not depend on the chunking.
export class CsvParser extends Transform {
  constructor() {
    super({ readableObjectMode: true });
    this.decoder = new StringDecoder("utf8");
    this.field = "";
    this.record = [];
    this.state = "start"; // start | field | quoted | quote (a quote seen inside a quoted field) | cr
    this.touched = false; // the current record has content
  }

  _transform(chunk, encoding, callback) {
    const text = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    this.feed(text);
    callback();
  }

  _flush(callback) {
    this.feed(this.decoder.end());
    if (this.state === "quoted") return callback(new Error("unterminated quoted field"));
    if (this.touched || this.field !== "" || this.record.length) this.endRecord();
    callback();
  }

  endField() {
    this.record.push(this.field);
    this.field = "";
  }

  endRecord() {
    this.endField();
    this.push(this.record);
    this.record = [];
    this.touched = false;
  }

  feed(text) {
    for (const c of text) {
      switch (this.state) {
        case "quoted":
          if (c === '"') this.state = "quote";
          else this.field += c;
          break;
        case "quote":
          if (c === '"') {
            this.field += '"';
            this.state = "quoted";
            break;
          }
          this.state = "field";
        // falls through: the quote closed the field
        default:
          if (this.state === "cr") {
            this.state = "start";
            if (c === "\n") break;
          }
          if (c === '"' && this.field === "" && this.state !== "field-after") {
            this.state = "quoted";
            this.touched = true;
          } else if (c === ",") {
            this.endField();
            this.touched = true;
            this.state = "start";
          } else if (c === "\n" || c === "\r") {
            if (this.touched || this.field !== "" || this.record.length) this.endRecord();
            this.state = c === "\r" ? "cr" : "start";
          } else {
            this.field += c;
            this.touched = true;
            this.state = "field";
          }
      }
    }
  }
}
JS
printf 'a,b\n1,"x,y"\n' | node bin/csv2json.js
