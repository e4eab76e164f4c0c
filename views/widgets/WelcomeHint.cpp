#include "views/widgets/WelcomeHint.h"

namespace allocscope::views {

WelcomeHint::WelcomeHint(QWidget* parent)
    : QLabel(tr("<h2>AllocScope</h2><p>A lab for the PyTorch CUDA caching allocator.</p>"
                "<p>Open a session, a PyTorch memory snapshot or an RMM CSV log with <b>File ▸ Open…</b> (Ctrl+O),<br>"
                "drop one here, or pick a workload on the left and press <b>Run</b>.</p>"
                "<p>New to the allocator? <a href=\"lessons\">Start a guided lesson</a> (F1).</p>"),
             parent) {
    setAlignment(Qt::AlignCenter);
    setWordWrap(true);
    // The link opens the Lessons dock, not a browser.
    setTextInteractionFlags(Qt::TextBrowserInteraction);
    setOpenExternalLinks(false);
    connect(this, &QLabel::linkActivated, this, &WelcomeHint::lessonsRequested);
}

}  // namespace allocscope::views
