#pragma once
// What the lesson panel shows, as plain values: the list of lessons, and for the chosen lesson its
// question and claim, the steps' texts, and after a run the numbers table and the verdict. The
// panel never sees the lesson engine; app/gui/LessonController fills these.
#include <QList>
#include <QString>
#include <QStringList>

namespace allocscope::views {

struct LessonListEntry {
    QString name;  // NAME, as `allocscope-cli lesson NAME` takes it
    int number = 0;
    QString title;
};

struct LessonNumbersRow {
    QString metric;      // "peak reserved"
    QStringList values;  // one per run, formatted ("4052.0 MiB", "5", "yes")
};

struct LessonStepData {
    QString text;
    QString where;  // "default run, at the peak, segment map": shown under the text
};

enum class LessonOutcome { True, False, Depends };

struct LessonData {
    QString name;
    QString title;
    QString question;
    QString claim;
    QString program;  // one line: what runs
    QList<LessonStepData> steps;
    // Filled after a run:
    bool hasResult = false;
    QStringList runLabels;  // table columns
    QList<LessonNumbersRow> numbers;
    LessonOutcome outcome = LessonOutcome::False;
    QString verdictText;  // why
    QString rule;         // the rule that decided
};

}  // namespace allocscope::views
