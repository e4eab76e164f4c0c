#pragma once
// The lessons on disk: every *.json file of a folder, loaded and sorted by lesson number. The
// folder is, in order: the one given, $ALLOCSCOPE_LESSONS_DIR, the installed share/allocscope/lessons
// beside the executable, or resources/lessons of the source tree this was built from (DataDirectory).
#include <string>
#include <vector>

#include "app/lessons/Lesson.h"

namespace allocscope::app {

class LessonLibrary {
public:
    static std::string defaultFolder();
    // Loads every lesson of `folder` (throws LessonError for the first bad file, or two lessons
    // with one name).
    static std::vector<Lesson> load(const std::string& folder);
    // One lesson by NAME; throws LessonError("no lesson 'x' (did you mean 'y'?)", folder).
    static Lesson find(const std::vector<Lesson>& lessons, const std::string& name, const std::string& folder);
};

}  // namespace allocscope::app
