//! Where the main window opens and how big it is: fully on a monitor, never larger than it.
//!
//! A pure function of the monitors, the monitor the user is on and the saved geometry (if any),
//! so that every case (first start, saved state, a saved monitor that is gone, a saved size larger
//! than today's monitor) is unit-tested without a display. All values are physical pixels in the
//! desktop's coordinate space (the same space as `tauri::Monitor::work_area`).

/// A rectangle in physical pixels: top-left corner `(x, y)`, `w` wide and `h` high.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub w: u32,
    pub h: u32,
}

impl Rect {
    fn right(&self) -> i64 {
        i64::from(self.x) + i64::from(self.w)
    }

    fn bottom(&self) -> i64 {
        i64::from(self.y) + i64::from(self.h)
    }

    /// The area (square pixels) this rectangle shares with `other`; 0 when they do not overlap.
    fn overlap(&self, other: &Rect) -> i64 {
        let w = self.right().min(other.right()) - i64::from(self.x.max(other.x));
        let h = self.bottom().min(other.bottom()) - i64::from(self.y.max(other.y));
        w.max(0) * h.max(0)
    }
}

/// What the window should look like when nothing is saved, and what it must keep room for.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Inner size wanted on a large monitor (physical pixels).
    pub preferred: (u32, u32),
    /// Share of the monitor's work area a first window takes at most (0..=1), so that it opens
    /// visibly as a window, not as a maximised one.
    pub max_share: f64,
    /// Inner size below which the UI stops working (physical pixels); given up only on a monitor
    /// smaller than that.
    pub min: (u32, u32),
    /// Room kept for the window manager's frame and title bar around the inner size (physical
    /// pixels, width and height), so that the outer window fits too.
    pub frame: (u32, u32),
}

/// Returns the window's inner rectangle: `(x, y)` is where its outer top-left corner goes, `w` x
/// `h` its inner size.
///
/// - `saved` (the geometry of the last run: outer position, inner size) on a monitor of
///   `monitors` (work areas): kept on the monitor it overlaps most, shrunk to fit it and moved
///   just enough to lie fully inside it.
/// - `saved` on no monitor (that monitor is gone), or nothing saved: centred on `current` (the
///   work area of the monitor the user is on), with the saved size or the preferred one, shrunk
///   to fit.
pub fn place(saved: Option<Rect>, monitors: &[Rect], current: Rect, sizes: Sizes) -> Rect {
    let on_monitor = saved.and_then(|s| {
        monitors
            .iter()
            .map(|m| (s.overlap(m), m))
            .filter(|(area, _)| *area > 0)
            .max_by_key(|(area, _)| *area)
            .map(|(_, m)| (s, *m))
    });
    match on_monitor {
        Some((s, monitor)) => {
            let (w, h) = fit((s.w, s.h), monitor, sizes);
            let x = clamp(s.x, monitor.x, monitor.w, w + sizes.frame.0);
            let y = clamp(s.y, monitor.y, monitor.h, h + sizes.frame.1);
            Rect { x, y, w, h }
        }
        None => {
            let wanted = match saved {
                Some(s) => (s.w, s.h),
                None => (
                    sizes
                        .preferred
                        .0
                        .min((f64::from(current.w) * sizes.max_share) as u32),
                    sizes
                        .preferred
                        .1
                        .min((f64::from(current.h) * sizes.max_share) as u32),
                ),
            };
            let (w, h) = fit(wanted, current, sizes);
            Rect {
                x: centre(current.x, current.w, w + sizes.frame.0),
                y: centre(current.y, current.h, h + sizes.frame.1),
                w,
                h,
            }
        }
    }
}

/// `wanted` grown to the minimum size and then shrunk so that it and its frame fit `monitor`.
fn fit(wanted: (u32, u32), monitor: Rect, sizes: Sizes) -> (u32, u32) {
    let room_w = monitor.w.saturating_sub(sizes.frame.0).max(1);
    let room_h = monitor.h.saturating_sub(sizes.frame.1).max(1);
    (
        wanted.0.max(sizes.min.0).min(room_w),
        wanted.1.max(sizes.min.1).min(room_h),
    )
}

/// `start` moved so that `[start, start + len)` lies inside `[origin, origin + room)`.
fn clamp(start: i32, origin: i32, room: u32, len: u32) -> i32 {
    let last = i64::from(origin) + i64::from(room.saturating_sub(len));
    i64::from(start).clamp(i64::from(origin), last) as i32
}

/// Where `len` starts when centred in `[origin, origin + room)`.
fn centre(origin: i32, room: u32, len: u32) -> i32 {
    (i64::from(origin) + i64::from(room.saturating_sub(len)) / 2) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: Sizes = Sizes {
        preferred: (1280, 820),
        max_share: 0.9,
        min: (640, 480),
        frame: (0, 40),
    };

    fn r(x: i32, y: i32, w: u32, h: u32) -> Rect {
        Rect { x, y, w, h }
    }

    fn inside(win: Rect, m: Rect) -> bool {
        win.x >= m.x
            && win.y >= m.y
            && win.right() + i64::from(SIZES.frame.0) <= m.right()
            && win.bottom() + i64::from(SIZES.frame.1) <= m.bottom()
    }

    #[test]
    fn first_start_is_centred_and_fits_the_monitor() {
        let screen = r(0, 0, 1400, 900);
        let win = place(None, &[screen], screen, SIZES);
        assert_eq!((win.w, win.h), (1260, 810));
        assert_eq!((win.x, win.y), (70, 25));
        assert!(inside(win, screen));
    }

    #[test]
    fn first_start_on_a_large_monitor_takes_the_preferred_size_centred() {
        let screen = r(0, 0, 2560, 1440);
        let win = place(None, &[screen], screen, SIZES);
        assert_eq!(win, r(640, 290, 1280, 820));
    }

    #[test]
    fn first_start_is_centred_on_the_current_monitor_not_the_first() {
        let left = r(0, 0, 1920, 1080);
        let right = r(1920, 0, 1400, 900);
        let win = place(None, &[left, right], right, SIZES);
        assert!(inside(win, right), "{win:?}");
    }

    #[test]
    fn a_saved_geometry_on_screen_is_kept() {
        let screen = r(0, 0, 1400, 900);
        let saved = r(100, 50, 900, 600);
        assert_eq!(place(Some(saved), &[screen], screen, SIZES), saved);
    }

    #[test]
    fn a_saved_geometry_partly_off_screen_is_moved_back_whole() {
        let screen = r(0, 0, 1400, 900);
        let win = place(Some(r(1000, 700, 900, 600)), &[screen], screen, SIZES);
        assert_eq!(win, r(500, 260, 900, 600));
        let win = place(Some(r(-300, -50, 900, 600)), &[screen], screen, SIZES);
        assert_eq!(win, r(0, 0, 900, 600));
    }

    #[test]
    fn a_saved_geometry_on_a_monitor_that_is_gone_is_centred_on_the_current_one() {
        let screen = r(0, 0, 1400, 900);
        let win = place(Some(r(3000, 2000, 900, 600)), &[screen], screen, SIZES);
        assert_eq!(win, r(250, 130, 900, 600));
    }

    #[test]
    fn a_saved_size_larger_than_the_monitor_is_shrunk_to_fit() {
        let screen = r(0, 0, 1400, 900);
        let win = place(Some(r(0, 0, 2500, 1600)), &[screen], screen, SIZES);
        assert_eq!(win, r(0, 0, 1400, 860));
        let win = place(Some(r(5000, 0, 2500, 1600)), &[screen], screen, SIZES);
        assert_eq!(win, r(0, 0, 1400, 860));
    }

    #[test]
    fn a_saved_size_below_the_minimum_grows_to_it() {
        let screen = r(0, 0, 1400, 900);
        let win = place(Some(r(10, 10, 200, 100)), &[screen], screen, SIZES);
        assert_eq!(win, r(10, 10, 640, 480));
    }

    #[test]
    fn a_monitor_smaller_than_the_minimum_wins_over_the_minimum() {
        let screen = r(0, 0, 600, 400);
        let win = place(None, &[screen], screen, SIZES);
        assert_eq!(win, r(0, 0, 600, 360));
    }

    #[test]
    fn a_saved_window_stays_on_the_monitor_it_overlaps_most() {
        let left = r(0, 0, 1920, 1080);
        let right = r(1920, 0, 1400, 900);
        let win = place(Some(r(1800, 100, 1000, 700)), &[left, right], left, SIZES);
        assert!(inside(win, right), "{win:?}");
        assert_eq!((win.w, win.h), (1000, 700));
    }
}
