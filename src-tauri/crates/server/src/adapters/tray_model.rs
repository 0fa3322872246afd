//! What the tray icon shows: counts of tasks needing input and running, and its menu. Pure, so
//! it is tested without a tray (nothing renders a tray under a virtual display).

use std::collections::BTreeMap;

/// Menu item id: "Show Taskdeck" (shows the window).
pub const SHOW: &str = "show";
/// Menu item id: the "Pause notifications" check item.
pub const PAUSE: &str = "pause-notifications";
/// Menu item id: "Quit Taskdeck".
pub const QUIT: &str = "quit";

/// The tray's state.
#[derive(Debug, Clone, PartialEq)]
pub struct TrayModel {
    /// Tasks in `input_required`.
    pub needs_input: i64,
    /// Tasks in `working`.
    pub running: i64,
    /// Tooltip / title, e.g. `Taskdeck: 2 need input, 3 running`.
    pub tooltip: String,
    /// `(id, label, checked)`; `checked` is `Some` for check items.
    pub items: Vec<(&'static str, String, Option<bool>)>,
}

/// The model for per-status `counts` (as `/v1/tasks` returns them) and the pause setting.
pub fn tray_model(counts: &BTreeMap<String, i64>, notifications_paused: bool) -> TrayModel {
    let needs_input = counts.get("input_required").copied().unwrap_or(0);
    let running = counts.get("working").copied().unwrap_or(0);
    let needs = if needs_input == 1 { "needs" } else { "need" };
    let counts = match (needs_input, running) {
        (0, 0) => None,
        (0, r) => Some(format!("{r} running")),
        (n, 0) => Some(format!("{n} {needs} input")),
        (n, r) => Some(format!("{n} {needs} input, {r} running")),
    };
    let tooltip = format!(
        "Taskdeck: {}",
        counts.as_deref().unwrap_or("nothing running")
    );
    // Linux tray hosts (StatusNotifierItem through libayatana-appindicator) show no tooltip, so
    // the counts are in the menu too.
    let show = match &counts {
        Some(counts) => format!("Show Taskdeck ({counts})"),
        None => "Show Taskdeck".into(),
    };
    TrayModel {
        needs_input,
        running,
        tooltip,
        items: vec![
            (SHOW, show, None),
            (
                PAUSE,
                "Pause notifications".into(),
                Some(notifications_paused),
            ),
            (QUIT, "Quit Taskdeck".into(), None),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_menu() {
        let counts: BTreeMap<String, i64> = [
            ("input_required".to_string(), 2),
            ("working".to_string(), 3),
            ("completed".to_string(), 9),
        ]
        .into();
        let m = tray_model(&counts, true);
        assert_eq!(m.tooltip, "Taskdeck: 2 need input, 3 running");
        assert_eq!(m.items[0].1, "Show Taskdeck (2 need input, 3 running)");
        assert_eq!(
            m.items[1],
            (PAUSE, "Pause notifications".to_string(), Some(true))
        );
        assert_eq!(m.items[2].0, QUIT);
        assert_eq!(
            tray_model(&BTreeMap::new(), false).tooltip,
            "Taskdeck: nothing running"
        );
        let one: BTreeMap<String, i64> = [("input_required".to_string(), 1)].into();
        assert_eq!(tray_model(&one, false).tooltip, "Taskdeck: 1 needs input");
        assert_eq!(
            tray_model(&one, false).items[0].1,
            "Show Taskdeck (1 needs input)"
        );
        let running: BTreeMap<String, i64> = [("working".to_string(), 4)].into();
        assert_eq!(
            tray_model(&running, false).items[0].1,
            "Show Taskdeck (4 running)"
        );
        assert_eq!(
            tray_model(&BTreeMap::new(), false).items[0].1,
            "Show Taskdeck"
        );
    }
}
