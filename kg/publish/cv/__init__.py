"""A person's CV from their own profile document: `build` makes the plain `CV` data
(`model`), `render` writes it as Markdown, HTML or LaTeX through templates a project can
override, `jsonresume` as a JSON Resume document, `pdf` compiles the LaTeX with TeX."""
