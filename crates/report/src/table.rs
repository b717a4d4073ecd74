//! [`Table`]: one table model rendered as markdown, aligned terminal text or a sortable
//! HTML table, so every output of a report shows the same figures.

use std::fmt::Write as _;

/// How a column's cells are aligned (numbers right, names left).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Numeric columns.
    Right,
}

/// A titled table: column headers with their alignment, and rows of formatted cells. A
/// cell may carry the number it shows, which HTML tables sort by.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// The caption (a markdown heading, an HTML `<caption>`).
    pub title: String,
    /// Column headers, units included (`P99 (µs)`).
    pub columns: Vec<(String, Align)>,
    /// Rows of `(text, number to sort by)`.
    pub rows: Vec<Vec<(String, Option<f64>)>>,
}

fn escape_markdown(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Escapes text for HTML element content and attribute values.
pub(crate) fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

impl Table {
    /// An empty table with a title and columns.
    pub fn new(title: impl Into<String>, columns: &[(&str, Align)]) -> Table {
        Table {
            title: title.into(),
            columns: columns.iter().map(|(h, a)| (h.to_string(), *a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row. The caller guarantees it has one cell per column.
    pub fn push(&mut self, row: Vec<(String, Option<f64>)>) {
        debug_assert_eq!(
            row.len(),
            self.columns.len(),
            "a row has one cell per column"
        );
        self.rows.push(row);
    }

    /// A GitHub-flavoured markdown table under a `### title` heading, columns padded so
    /// the text lines up.
    pub fn to_markdown(&self) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|(t, _)| escape_markdown(t)).collect())
            .collect();
        let headers: Vec<String> = self
            .columns
            .iter()
            .map(|(h, _)| escape_markdown(h))
            .collect();
        let widths = self.widths(&headers, &cells, 3);
        let mut out = format!("### {}\n\n", self.title);
        let line = |out: &mut String, row: &[String]| {
            out.push('|');
            for (i, cell) in row.iter().enumerate() {
                let pad = widths[i] - cell.chars().count();
                match self.columns[i].1 {
                    Align::Left => write!(out, " {cell}{} |", " ".repeat(pad)),
                    Align::Right => write!(out, " {}{cell} |", " ".repeat(pad)),
                }
                .expect("writing to a String cannot fail");
            }
            out.push('\n');
        };
        line(&mut out, &headers);
        out.push('|');
        for (i, (_, align)) in self.columns.iter().enumerate() {
            let dashes = "-".repeat(widths[i] - 1);
            match align {
                Align::Left => write!(out, " {dashes}- |"),
                Align::Right => write!(out, " {dashes}: |"),
            }
            .expect("writing to a String cannot fail");
        }
        out.push('\n');
        for row in &cells {
            line(&mut out, row);
        }
        out
    }

    /// Plain aligned columns for a terminal, two spaces apart, title first.
    pub fn to_terminal(&self) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|(t, _)| t.clone()).collect())
            .collect();
        let headers: Vec<String> = self.columns.iter().map(|(h, _)| h.clone()).collect();
        let widths = self.widths(&headers, &cells, 1);
        let mut out = format!("{}\n", self.title);
        for row in std::iter::once(&headers).chain(&cells) {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = " ".repeat(widths[i] - cell.chars().count());
                match self.columns[i].1 {
                    Align::Left => {
                        line.push_str(cell);
                        line.push_str(&pad);
                    }
                    Align::Right => {
                        line.push_str(&pad);
                        line.push_str(cell);
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// An HTML `<table class="sortable">`: clicking a header sorts by that column (the
    /// page's script), numerically by each cell's `data-v` where the cell has a number.
    /// Text cells may break after a `/` (`<wbr>`), so long paths wrap instead of widening
    /// the table.
    pub fn to_html(&self) -> String {
        let mut out = String::from("<table class=\"sortable\">\n");
        writeln!(out, "<caption>{}</caption>", escape_html(&self.title))
            .expect("writing to a String cannot fail");
        out.push_str("<thead><tr>");
        for (h, align) in &self.columns {
            let class = match align {
                Align::Left => "",
                Align::Right => " class=\"num\"",
            };
            write!(
                out,
                "<th{class} title=\"sort by {}\">{}</th>",
                escape_html(h),
                escape_html(h)
            )
            .expect("writing to a String cannot fail");
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (i, (text, number)) in row.iter().enumerate() {
                let class = match self.columns[i].1 {
                    Align::Left => "",
                    Align::Right => " class=\"num\"",
                };
                let data = match number {
                    Some(v) if v.is_finite() => format!(" data-v=\"{v}\""),
                    _ => String::new(),
                };
                // Names and paths may wrap after a `/` when the page is narrow.
                let text = match self.columns[i].1 {
                    Align::Left => escape_html(text).replace('/', "/<wbr>"),
                    Align::Right => escape_html(text),
                };
                write!(out, "<td{class}{data}>{text}</td>")
                    .expect("writing to a String cannot fail");
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out
    }

    fn widths(&self, headers: &[String], cells: &[Vec<String>], min: usize) -> Vec<usize> {
        (0..self.columns.len())
            .map(|i| {
                std::iter::once(&headers[i])
                    .chain(cells.iter().map(|r| &r[i]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(min)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let mut t = Table::new("Demo", &[("Store", Align::Left), ("Ops/s", Align::Right)]);
        t.push(vec![("a|b".into(), None), ("1200".into(), Some(1200.0))]);
        t.push(vec![("redis".into(), None), ("5".into(), Some(5.0))]);
        t
    }

    #[test]
    fn markdown_is_aligned_and_escaped() {
        assert_eq!(
            table().to_markdown(),
            "### Demo\n\n\
             | Store | Ops/s |\n\
             | ----- | ----: |\n\
             | a\\|b  |  1200 |\n\
             | redis |     5 |\n"
        );
    }

    #[test]
    fn terminal_columns() {
        assert_eq!(
            table().to_terminal(),
            "Demo\nStore  Ops/s\na|b     1200\nredis      5\n"
        );
    }

    #[test]
    fn html_cells_carry_sort_values() {
        let html = table().to_html();
        assert!(
            html.contains("<td class=\"num\" data-v=\"1200\">1200</td>"),
            "{html}"
        );
        assert!(html.contains("<caption>Demo</caption>"), "{html}");
        let mut paths = Table::new("Paths", &[("Result", Align::Left), ("n", Align::Right)]);
        paths.push(vec![("a/b".into(), None), ("1/2".into(), Some(0.5))]);
        let html = paths.to_html();
        assert!(html.contains("<td>a/<wbr>b</td>"), "{html}");
        assert!(html.contains(">1/2</td>"), "numbers do not break: {html}");
        assert_eq!(
            escape_html("<a href='x'>&\""),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;"
        );
    }
}
