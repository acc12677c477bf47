const { slugify } = require("./slug");

// Words are the dash-separated parts of the slug.
function wordCount(text) {
  const slug = slugify(text);
  return slug ? slug.split("-").length : 0;
}

module.exports = { wordCount };
