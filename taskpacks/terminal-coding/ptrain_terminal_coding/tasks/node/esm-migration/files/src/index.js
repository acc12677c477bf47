const { slugify } = require("./slug");
const { truncate } = require("./truncate");
const { wordCount } = require("./words");

module.exports = { slugify, truncate, wordCount };
