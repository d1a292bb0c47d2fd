//! A hand-written SVG horizontal bar chart of ratios (rollfs / reference), with a line at 1.

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Renders `(label, ratio)` bars; missing ratios are drawn as "n/a".
pub fn ratio_chart(title: &str, bars: &[(String, Option<f64>)]) -> String {
    let label_w = 330.0;
    let plot_w = 420.0;
    let bar_h = 18.0;
    let gap = 6.0;
    let top = 40.0;
    let height = top + bars.len() as f64 * (bar_h + gap) + 40.0;
    let width = label_w + plot_w + 70.0;
    let max = bars.iter().filter_map(|(_, r)| *r).fold(1.0f64, f64::max).max(1.0) * 1.1;
    let x = |r: f64| label_w + (r / max) * plot_w;
    let mut s = String::new();
    s += &format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" font-family=\"sans-serif\" font-size=\"12\">\n"
    );
    s += &format!("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", esc(title));
    for (i, (label, r)) in bars.iter().enumerate() {
        let y = top + i as f64 * (bar_h + gap);
        s += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            label_w - 8.0,
            y + bar_h * 0.75,
            esc(label)
        );
        match r {
            Some(r) => {
                let color = if *r >= 1.0 { "#3a7d44" } else { "#c0504d" };
                s += &format!(
                    "<rect x=\"{label_w:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bar_h:.1}\" fill=\"{color}\"/>\n",
                    (x(*r) - label_w).max(1.0)
                );
                s += &format!("<text x=\"{:.1}\" y=\"{:.1}\">{r:.2}×</text>\n", x(*r) + 4.0, y + bar_h * 0.75);
            }
            None => {
                s += &format!(
                    "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#888\">n/a</text>\n",
                    label_w + 4.0,
                    y + bar_h * 0.75
                )
            }
        }
    }
    let bottom = top + bars.len() as f64 * (bar_h + gap);
    s += &format!(
        "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"black\" stroke-dasharray=\"4,3\"/>\n",
        x(1.0),
        top - 6.0,
        bottom
    );
    s += &format!("<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">1.0 (parity)</text>\n", x(1.0), bottom + 16.0);
    s += "</svg>\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_has_one_bar_per_ratio_and_escapes_labels() {
        let svg = ratio_chart("t", &[("a<b".into(), Some(2.0)), ("c".into(), None), ("d".into(), Some(0.5))]);
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<rect").count(), 1 + 2);
        assert!(svg.contains("a&lt;b"));
        assert!(svg.contains("n/a"));
    }
}
